/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the wire decoder. The input is a frame body; if it decodes, it is
 * encoded again, the encoding decoded, and the two messages must be equal field
 * by field and encode to the same bytes; a data frame's header from
 * proto_data_header() must be the start of its encoding. The first four bytes
 * are also read as a frame header. Any disagreement aborts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moat/proto.h"

static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_proto: %s\n", what);
		abort();
	}
}

static int
str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int
strv_eq(const char *const *a, size_t na, const char *const *b, size_t nb)
{
	if (na != nb || !a || !b)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (!str_eq(a[i], b[i]))
			return 0;
	return !a[na] && !b[nb];
}

static int
tasks_eq(const struct proto_task_info *a, size_t na, const struct proto_task_info *b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (a[i].id != b[i].id || a[i].uid != b[i].uid || a[i].pid != b[i].pid ||
		    a[i].started != b[i].started || !str_eq(a[i].session, b[i].session) ||
		    !str_eq(a[i].command, b[i].command))
			return 0;
	return 1;
}

static int
exec_eq(const struct proto_msg *a, const struct proto_msg *b)
{
	return strv_eq(a->u.exec.argv, a->u.exec.argc, b->u.exec.argv, b->u.exec.argc) &&
	       strv_eq(a->u.exec.env, a->u.exec.envc, b->u.exec.env, b->u.exec.envc) &&
	       str_eq(a->u.exec.cwd, b->u.exec.cwd) && str_eq(a->u.exec.path, b->u.exec.path) &&
	       str_eq(a->u.exec.session, b->u.exec.session) && a->u.exec.tty == b->u.exec.tty &&
	       a->u.exec.rows == b->u.exec.rows && a->u.exec.cols == b->u.exec.cols;
}

static int
msg_eq(const struct proto_msg *a, const struct proto_msg *b)
{
	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case PROTO_HELLO:
		return a->u.hello.version == b->u.hello.version &&
		       str_eq(a->u.hello.ticket, b->u.hello.ticket);
	case PROTO_EXEC:
		return exec_eq(a, b);
	case PROTO_STARTED:
		return a->u.started.id == b->u.started.id && a->u.started.pid == b->u.started.pid;
	case PROTO_STDIN:
	case PROTO_STDOUT:
	case PROTO_STDERR:
		return a->u.data.len == b->u.data.len &&
		       (!a->u.data.len || !memcmp(a->u.data.data, b->u.data.data, a->u.data.len));
	case PROTO_SIGNAL:
		return a->u.signal.signal == b->u.signal.signal;
	case PROTO_RESIZE:
		return a->u.resize.rows == b->u.resize.rows && a->u.resize.cols == b->u.resize.cols;
	case PROTO_EOF:
	case PROTO_PS:
		return 1;
	case PROTO_EXIT:
		return a->u.exit.code == b->u.exit.code && a->u.exit.signal == b->u.exit.signal;
	case PROTO_ERROR:
		return a->u.error.code == b->u.error.code && a->u.error.err == b->u.error.err &&
		       str_eq(a->u.error.message, b->u.error.message);
	case PROTO_TASKS:
		return tasks_eq(a->u.tasks.tasks, a->u.tasks.n, b->u.tasks.tasks, b->u.tasks.n);
	case PROTO_KILL:
		return str_eq(a->u.kill.session, b->u.kill.session) &&
		       a->u.kill.id == b->u.kill.id && a->u.kill.all == b->u.kill.all;
	case PROTO_KILLED:
		return a->u.killed.count == b->u.killed.count;
	case PROTO_TYPE_MAX:
		break;
	}
	return 0;
}

static void
check_header(const uint8_t *data, size_t size)
{
	uint32_t len = 0;
	uint64_t n;

	if (size < PROTO_HEADER_SIZE)
		return;
	n = (uint64_t)data[0] << 24 | data[1] << 16 | data[2] << 8 | data[3];
	if (n >= 1 && n <= PROTO_FRAME_MAX)
		check(proto_frame_length(data, &len) == 0 && len == n, "frame length refused");
	else
		check(proto_frame_length(data, &len) == -EMSGSIZE && len == 0,
		      "frame length accepted");
}

static int
is_data(enum proto_type t)
{
	return t == PROTO_STDIN || t == PROTO_STDOUT || t == PROTO_STDERR;
}

/* A data frame: it points into the input, and its header is the start of its encoding. */
static void
check_data(const struct proto_msg *m, const uint8_t *data, size_t size, const struct proto_buf *enc)
{
	uint8_t hdr[PROTO_DATA_HEADER_MAX];
	int n;

	if (!is_data(m->type))
		return;
	check(!m->u.data.len ||
	          (m->u.data.data >= data && m->u.data.data + m->u.data.len <= data + size),
	      "data does not point into the input");
	n = proto_data_header(m->type, m->u.data.len, hdr);
	check(n > 0 && (size_t)n + m->u.data.len == enc->len && !memcmp(hdr, enc->p, n),
	      "data header differs from the encoding");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_msg a = {0}, b = {0};
	struct proto_buf one = {0}, two = {0};
	char err[256] = "";
	uint32_t len = 0;

	check_header(data, size);
	if (proto_decode(data, size, &a, err, sizeof(err)) < 0) {
		check(err[0] != '\0', "refused without a reason");
		return 0;
	}
	check(proto_encode(&one, &a) == 0, "a decoded message does not encode");
	check(proto_frame_length(one.p, &len) == 0 && len == one.len - PROTO_HEADER_SIZE,
	      "bad frame header");
	check(proto_decode(one.p + PROTO_HEADER_SIZE, len, &b, err, sizeof(err)) == 0,
	      "an encoded message does not decode");
	check(msg_eq(&a, &b), "the round trip changed the message");
	check(proto_encode(&two, &b) == 0 && two.len == one.len && !memcmp(two.p, one.p, one.len),
	      "encoding is not deterministic");
	check_data(&a, data, size, &one);
	proto_msg_free(&a);
	proto_msg_free(&b);
	proto_buf_free(&one);
	proto_buf_free(&two);
	return 0;
}
