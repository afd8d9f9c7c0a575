/* SPDX-License-Identifier: MIT */
/* The pieces of the audit line that must be exact: the policy digest and JSON strings of bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "audit.h"
#include "moat/jsonw.h"
#include "moat/macro.h"

static void
test_sha256_vectors(void **state)
{
	static const struct {
		const char *in;
		size_t repeat;
		const char *hex;
	} v[] = {
	    /* FIPS 180-4 examples, and the lengths around the padding boundaries. */
	    {"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	    {"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
	     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	    {"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
	    {"a", 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
	    {"a", 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
	    {"a", 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
	};
	char out[65];

	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		size_t n = strlen(v[i].in) * v[i].repeat;
		char *buf = malloc(n + 1);
		assert_non_null(buf);
		for (size_t k = 0; k < v[i].repeat; k++)
			memcpy(buf + k * strlen(v[i].in), v[i].in, strlen(v[i].in));
		sha256_hex(buf, n, out);
		free(buf);
		assert_string_equal(out, v[i].hex);
	}
}

static char *
encode(const char *s, size_t n)
{
	static char buf[1024];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	assert_non_null(f);
	jsonw_string(f, s, n);
	fclose(f);
	return buf;
}

static void
test_json_strings(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
	} v[] = {
	    {"plain", 5, "\"plain\""},
	    {"q\"b\\", 4, "\"q\\\"b\\\\\""},
	    {"a\nb\tc", 5, "\"a\\nb\\tc\""},
	    {"\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\""},
	    {"\0x", 2, "\"\\u0000x\""},
	    /* Valid UTF-8 passes; every byte of an invalid sequence is escaped. */
	    {"caf\xc3\xa9", 5, "\"caf\xc3\xa9\""},
	    {"\xf0\x9f\x99\x82", 4, "\"\xf0\x9f\x99\x82\""},
	    {"\xff", 1, "\"\\u00ff\""},
	    {"\xc3", 1, "\"\\u00c3\""},
	    {"\xc0\xaf", 2, "\"\\u00c0\\u00af\""},                       /* overlong "/" */
	    {"\xed\xa0\x80", 3, "\"\\u00ed\\u00a0\\u0080\""},            /* a surrogate */
	    {"\xf4\x90\x80\x80", 4, "\"\\u00f4\\u0090\\u0080\\u0080\""}, /* above U+10FFFF */
	};

	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		assert_string_equal(encode(v[i].in, v[i].len), v[i].out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sha256_vectors),
	    cmocka_unit_test(test_json_strings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
