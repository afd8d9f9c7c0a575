/* SPDX-License-Identifier: MIT */
/*
 * Writing JSON strings from arbitrary bytes. Paths and argv are bytes, not UTF-8:
 * valid UTF-8 is written as is, and every byte of an invalid sequence is written
 * as "\u00NN", so nothing is lost and a reader can tell such bytes from text.
 */
#ifndef MOAT_JSONW_H
#define MOAT_JSONW_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static inline size_t
jsonw_utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned min;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xE0) == 0xC0) {
		len = 2, min = 0x80, cp = s[0] & 0x1F;
	} else if ((s[0] & 0xF0) == 0xE0) {
		len = 3, min = 0x800, cp = s[0] & 0x0F;
	} else if ((s[0] & 0xF8) == 0xF0) {
		len = 4, min = 0x10000, cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

static inline void
jsonw_string(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t l;
		if (c == '"' || c == '\\') {
			fputc('\\', out);
			fputc(c, out);
			i++;
		} else if (c == '\n') {
			fputs("\\n", out);
			i++;
		} else if (c == '\t') {
			fputs("\\t", out);
			i++;
		} else if (c < 0x20 || c == 0x7F) {
			fprintf(out, "\\u%04x", c);
			i++;
		} else if ((l = jsonw_utf8_len(s + i, n - i)) > 0) {
			fwrite(s + i, 1, l, out);
			i += l;
		} else {
			fprintf(out, "\\u%04x", c);
			i++;
		}
	}
	fputc('"', out);
}

static inline void
jsonw_cstr(FILE *out, const char *s)
{
	if (s)
		jsonw_string(out, s, strlen(s));
	else
		fputs("null", out);
}

#endif
