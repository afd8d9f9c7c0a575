# Turns the file IN into a C source OUT defining policy_default_json[], NUL-terminated.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* generated from default.json: do not edit */\n"
  "extern const char policy_default_json[];\n"
  "const char policy_default_json[] = {${bytes} 0x00};\n")
