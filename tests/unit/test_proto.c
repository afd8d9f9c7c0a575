/* SPDX-License-Identifier: MIT */
/*
 * The runner wire protocol: every frame type round-trips through proto_encode()
 * and proto_decode() at its bounds; the data header is the start of the encoded
 * data frame; the frame length check; the encoder refuses what the decoder would;
 * and a table of malformed bodies, each refused with -EBADMSG and a reason that
 * names the field.
 *
 * Bodies are written in a small notation that the test packs with msgpack-c:
 *   {k: v, ...} a map, [v, ...] an array, 'text' a str (\0, \n, \xNN, \\ and \'
 *   escapes; 'text'^N repeats the text N times), b'text' a bin, 12 and -3
 *   integers, 1.5 a float, T, F and N true, false and nil; v*N stands for N
 *   copies of v in its map or array. Commas and colons are only separators.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include <cmocka.h>
#include <msgpack.h>

#include "moat/macro.h"
#include "moat/proto.h"

/* ---- the notation ---- */

static size_t pack_value(const char **p, msgpack_sbuffer *out);

static void
skip_separators(const char **p)
{
	while (**p == ' ' || **p == ',' || **p == ':')
		(*p)++;
}

static void
append(msgpack_sbuffer *out, const void *data, size_t n)
{
	if (n)
		msgpack_sbuffer_write(out, data, n);
}

static char
unescape(const char **p)
{
	char c = *(*p)++;
	char hex[3] = {0};

	if (c == '0')
		return '\0';
	if (c == 'n')
		return '\n';
	if (c != 'x')
		return c; /* \\ and \' */
	memcpy(hex, *p, 2);
	*p += 2;
	return (char)strtoul(hex, NULL, 16);
}

static void
pack_string(const char **p, bool bin, msgpack_packer *pk)
{
	char text[256];
	size_t n = 0, reps = 1;

	if (bin)
		(*p)++; /* the quote after b */
	while (**p != '\'') {
		char c = *(*p)++;

		if (!c || n == sizeof(text))
			fail_msg("notation: unterminated or long string");
		text[n++] = c == '\\' ? unescape(p) : c;
	}
	(*p)++;
	if (**p == '^')
		reps = strtoul(*p + 1, (char **)p, 10);
	if (bin)
		msgpack_pack_bin(pk, n * reps);
	else
		msgpack_pack_str(pk, n * reps);
	for (size_t i = 0; i < reps; i++)
		append(pk->data, text, n);
}

static void
pack_number(const char **p, msgpack_packer *pk)
{
	const char *end = *p + strspn(*p, "-0123456789");

	if (*end == '.')
		msgpack_pack_double(pk, strtod(*p, (char **)p));
	else if (**p == '-')
		msgpack_pack_int64(pk, strtoll(*p, (char **)p, 10));
	else
		msgpack_pack_uint64(pk, strtoull(*p, (char **)p, 10));
}

static void
pack_container(const char **p, char open, msgpack_packer *pk)
{
	char close = open == '{' ? '}' : ']';
	msgpack_sbuffer inner;
	size_t n = 0;

	msgpack_sbuffer_init(&inner);
	for (skip_separators(p); **p != close; skip_separators(p)) {
		if (!**p)
			fail_msg("notation: missing '%c'", close);
		n += pack_value(p, &inner);
	}
	(*p)++;
	if (open == '{')
		msgpack_pack_map(pk, n / 2);
	else
		msgpack_pack_array(pk, n);
	append(pk->data, inner.data, inner.size);
	msgpack_sbuffer_destroy(&inner);
}

/* Packs one value, or N of them with a *N suffix; returns how many. */
static size_t
pack_value(const char **p, msgpack_sbuffer *out)
{
	msgpack_packer pk;
	size_t start = out->size, n = 1;
	char c = **p;

	msgpack_packer_init(&pk, out, msgpack_sbuffer_write);
	if (c == '-' || isdigit((unsigned char)c))
		pack_number(p, &pk);
	else if (!strchr("{['bTFN", c))
		fail_msg("notation: unexpected \"%s\"", *p);
	else if ((*p)++, c == '{' || c == '[')
		pack_container(p, c, &pk);
	else if (c == '\'' || c == 'b')
		pack_string(p, c == 'b', &pk);
	else if (c == 'T')
		msgpack_pack_true(&pk);
	else if (c == 'F')
		msgpack_pack_false(&pk);
	else
		msgpack_pack_nil(&pk);
	if (**p == '*') {
		size_t len = out->size - start;
		char *copy = malloc(len);

		assert_non_null(copy);
		memcpy(copy, out->data + start, len);
		n = strtoul(*p + 1, (char **)p, 10);
		for (size_t i = 1; i < n; i++)
			append(out, copy, len);
		free(copy);
	}
	return n;
}

/* The body a notation stands for; free() it. */
static uint8_t *
body_of(const char *notation, size_t *len)
{
	msgpack_sbuffer sb;
	const char *p = notation;

	msgpack_sbuffer_init(&sb);
	if (pack_value(&p, &sb) != 1 || *p)
		fail_msg("notation: \"%s\" is not one value", notation);
	*len = sb.size;
	return (uint8_t *)msgpack_sbuffer_release(&sb);
}

static char *
repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* ---- round trips ---- */

/*
 * Encodes m into b, checks the header, decodes the body into out and checks that
 * out encodes to the same bytes again. Data frames point into b: keep it.
 */
static void
roundtrip(const struct proto_msg *m, struct proto_msg *out, struct proto_buf *b)
{
	struct proto_buf again = {0};
	char err[256] = "";
	uint32_t len = 0;

	b->len = 0;
	assert_int_equal(proto_encode(b, m), 0);
	assert_int_equal(proto_frame_length(b->p, &len), 0);
	assert_int_equal(len, b->len - PROTO_HEADER_SIZE);
	if (proto_decode(b->p + PROTO_HEADER_SIZE, len, out, err, sizeof(err)) != 0)
		fail_msg("%s: %s", proto_type_name(m->type), err);
	assert_int_equal(out->type, m->type);
	assert_int_equal(proto_encode(&again, out), 0);
	assert_int_equal(again.len, b->len);
	assert_memory_equal(again.p, b->p, b->len);
	proto_buf_free(&again);
}

/* Decodes a notation that must be accepted. */
static void
decode_ok(const char *notation, struct proto_msg *out)
{
	size_t len;
	uint8_t *body = body_of(notation, &len);
	char err[256] = "";

	if (proto_decode(body, len, out, err, sizeof(err)) != 0)
		fail_msg("%s: %s", notation, err);
	free(body);
}

static void
test_hello(void **state)
{
	char *ticket = repeat('t', PROTO_TICKET_MAX);
	struct proto_msg in = {.type = PROTO_HELLO, .u.hello = {.version = PROTO_VERSION}};
	struct proto_msg out;
	struct proto_buf b = {0};

	roundtrip(&in, &out, &b);
	assert_int_equal(out.u.hello.version, PROTO_VERSION);
	assert_null(out.u.hello.ticket);
	proto_msg_free(&out);

	/* Any version decodes: the runner answers PROTO_E_VERSION, not PROTO_E_PROTOCOL. */
	in.u.hello = (typeof(in.u.hello)){.version = UINT64_MAX, .ticket = ticket};
	roundtrip(&in, &out, &b);
	assert_true(out.u.hello.version == UINT64_MAX);
	assert_string_equal(out.u.hello.ticket, ticket);
	assert_ptr_not_equal(out.u.hello.ticket, ticket);
	assert_int_equal(out.u.hello.fds, 0);
	proto_msg_free(&out);

	/* fds: which of stdin, stdout, stderr come with it; 3 bits, no more. */
	in.u.hello = (typeof(in.u.hello)){.version = PROTO_VERSION, .fds = 5};
	roundtrip(&in, &out, &b);
	assert_int_equal(out.u.hello.fds, 5);
	proto_msg_free(&out);
	in.u.hello.fds = 8;
	proto_buf_free(&b);
	assert_int_equal(proto_encode(&b, &in), -EINVAL);
	proto_buf_free(&b);
	free(ticket);
}

/* Only anonymous pipes, open the way the stream goes, may go with a hello. */
static void
test_stdio_pipe(void **state)
{
	char dir[] = "/tmp/moat-proto-XXXXXX", fifo[64], file[64];
	int p[2];

	assert_int_equal(pipe(p), 0);
	assert_true(proto_stdio_pipe(p[0], 0));
	assert_false(proto_stdio_pipe(p[0], 1));
	assert_true(proto_stdio_pipe(p[1], 1));
	assert_true(proto_stdio_pipe(p[1], 2));
	assert_false(proto_stdio_pipe(p[1], 0));
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	int named = open(fifo, O_RDWR), opath = open(fifo, O_PATH);
	int reg = open(file, O_RDWR | O_CREAT, 0644), null = open("/dev/null", O_RDWR);
	assert_true(named >= 0 && opath >= 0 && reg >= 0 && null >= 0);
	assert_false(proto_stdio_pipe(named, 1)); /* a host inode */
	assert_false(proto_stdio_pipe(opath, 1));
	assert_false(proto_stdio_pipe(reg, 1));
	assert_false(proto_stdio_pipe(null, 1));
	assert_false(proto_stdio_pipe(-1, 1));
	int fds[] = {p[0], p[1], named, opath, reg, null};
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		close(fds[i]);
	unlink(fifo);
	unlink(file);
	rmdir(dir);
}

static void
test_exec(void **state)
{
	char *session = repeat('s', PROTO_NAME_MAX);
	const char *argv[] = {"sh", "-c", "echo 'a  b'\nexit 3", "\xff\xfe\x80 not utf-8",
	                      "",   NULL};
	const char *env[] = {"PATH=/usr/bin:/bin", "EMPTY=", "X=a=b", NULL};
	struct proto_msg in = {.type = PROTO_EXEC,
	                       .u.exec = {.argv = argv,
	                                  .argc = 5,
	                                  .env = env,
	                                  .envc = 3,
	                                  .cwd = "/home/u/my repo",
	                                  .path = "/usr/bin/sh",
	                                  .session = session,
	                                  .tty = true,
	                                  .rows = UINT16_MAX,
	                                  .cols = UINT16_MAX}};
	struct proto_msg out;
	struct proto_buf b = {0};

	roundtrip(&in, &out, &b);
	assert_int_equal(out.u.exec.argc, 5);
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(out.u.exec.argv[i], argv[i]);
	assert_null(out.u.exec.argv[5]);
	assert_int_equal(out.u.exec.envc, 3);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(out.u.exec.env[i], env[i]);
	assert_null(out.u.exec.env[3]);
	assert_string_equal(out.u.exec.cwd, "/home/u/my repo");
	assert_string_equal(out.u.exec.path, "/usr/bin/sh");
	assert_string_equal(out.u.exec.session, session);
	assert_true(out.u.exec.tty);
	assert_int_equal(out.u.exec.rows, UINT16_MAX);
	assert_int_equal(out.u.exec.cols, UINT16_MAX);
	assert_false(out.u.exec.has_umask);
	assert_int_equal(out.u.exec.sigign, 0);
	assert_non_null(out.arena);
	proto_msg_free(&out);

	/* A umask of 0 is a value, not an absent field; every signal may be ignored. */
	in.u.exec.has_umask = true;
	in.u.exec.umask = 0;
	in.u.exec.sigign = UINT64_MAX;
	roundtrip(&in, &out, &b);
	assert_true(out.u.exec.has_umask);
	assert_int_equal(out.u.exec.umask, 0);
	assert_true(out.u.exec.sigign == UINT64_MAX);
	proto_msg_free(&out);
	in.u.exec.umask = 0777;
	roundtrip(&in, &out, &b);
	assert_true(out.u.exec.has_umask);
	assert_int_equal(out.u.exec.umask, 0777);
	proto_msg_free(&out);
	proto_buf_free(&b);
	free(session);
}

/* One argument, an empty environment, a cwd of PATH_MAX - 1 bytes, no optional field. */
static void
test_exec_minimal(void **state)
{
	char *cwd = repeat('d', PROTO_PATH_MAX - 1);
	const char *argv[] = {"true", NULL};
	struct proto_msg in = {.type = PROTO_EXEC, .u.exec = {.argv = argv, .argc = 1, .cwd = cwd}};
	struct proto_msg out;
	struct proto_buf b = {0};

	cwd[0] = '/';
	roundtrip(&in, &out, &b);
	assert_int_equal(out.u.exec.argc, 1);
	assert_string_equal(out.u.exec.argv[0], "true");
	assert_int_equal(out.u.exec.envc, 0);
	assert_non_null(out.u.exec.env);
	assert_null(out.u.exec.env[0]);
	assert_string_equal(out.u.exec.cwd, cwd);
	assert_null(out.u.exec.path);
	assert_null(out.u.exec.session);
	assert_false(out.u.exec.tty);
	assert_int_equal(out.u.exec.rows, 0);
	assert_int_equal(out.u.exec.cols, 0);
	proto_msg_free(&out);
	proto_buf_free(&b);
	free(cwd);
}

/* PROTO_ARGS_MAX arguments and as many variables: the largest exec by count. */
static void
test_exec_max_args(void **state)
{
	const char **argv = calloc(PROTO_ARGS_MAX + 1, sizeof(*argv));
	const char **env = calloc(PROTO_ARGS_MAX + 1, sizeof(*env));
	struct proto_msg in = {.type = PROTO_EXEC,
	                       .u.exec = {.argv = argv,
	                                  .argc = PROTO_ARGS_MAX,
	                                  .env = env,
	                                  .envc = PROTO_ARGS_MAX,
	                                  .cwd = "/",
	                                  .path = "/bin/echo",
	                                  .session = "s"}};
	struct proto_msg out;
	struct proto_buf b = {0};

	assert_non_null(argv);
	assert_non_null(env);
	for (size_t i = 0; i < PROTO_ARGS_MAX; i++) {
		argv[i] = i % 2 ? "a" : "";
		env[i] = "K=V";
	}
	roundtrip(&in, &out, &b);
	assert_int_equal(out.u.exec.argc, PROTO_ARGS_MAX);
	assert_int_equal(out.u.exec.envc, PROTO_ARGS_MAX);
	assert_string_equal(out.u.exec.argv[PROTO_ARGS_MAX - 1], "a");
	assert_string_equal(out.u.exec.env[PROTO_ARGS_MAX - 1], "K=V");
	assert_null(out.u.exec.argv[PROTO_ARGS_MAX]);
	proto_msg_free(&out);
	proto_buf_free(&b);
	free(argv);
	free(env);
}

static void
test_started_killed(void **state)
{
	struct proto_msg started = {.type = PROTO_STARTED,
	                            .u.started = {.id = UINT64_MAX, .pid = 1}};
	struct proto_msg killed = {.type = PROTO_KILLED, .u.killed = {.count = UINT64_MAX}};
	struct proto_msg out;
	struct proto_buf b = {0};

	roundtrip(&started, &out, &b);
	assert_true(out.u.started.id == UINT64_MAX);
	assert_int_equal(out.u.started.pid, 1);
	proto_msg_free(&out);
	roundtrip(&killed, &out, &b);
	assert_true(out.u.killed.count == UINT64_MAX);
	proto_msg_free(&out);
	proto_buf_free(&b);
}

/* Data frames of 0, 1 and PROTO_CHUNK_MAX bytes point into the body they came from. */
static void
test_data(void **state)
{
	static const enum proto_type types[] = {PROTO_STDIN, PROTO_STDOUT, PROTO_STDERR};
	static const size_t lens[] = {0, 1, 255, 256, PROTO_CHUNK_MAX};
	uint8_t *chunk = malloc(PROTO_CHUNK_MAX);

	assert_non_null(chunk);
	for (size_t i = 0; i < PROTO_CHUNK_MAX; i++)
		chunk[i] = (uint8_t)(i * 7);
	for (size_t t = 0; t < ARRAY_SIZE(types); t++)
		for (size_t l = 0; l < ARRAY_SIZE(lens); l++) {
			struct proto_msg in = {.type = types[t],
			                       .u.data = {.data = chunk, .len = lens[l]}};
			struct proto_msg out;
			struct proto_buf b = {0};

			roundtrip(&in, &out, &b);
			assert_int_equal(out.u.data.len, lens[l]);
			assert_memory_equal(out.u.data.data, chunk, lens[l]);
			assert_true(out.u.data.data >= b.p &&
			            out.u.data.data + lens[l] <= b.p + b.len);
			assert_null(out.arena);
			proto_msg_free(&out);
			proto_buf_free(&b);
		}
	free(chunk);
}

static void
test_small_frames(void **state)
{
	const struct proto_msg in[] = {
	    {.type = PROTO_SIGNAL, .u.signal = {.signal = 1}},
	    {.type = PROTO_SIGNAL, .u.signal = {.signal = 64}},
	    {.type = PROTO_RESIZE, .u.resize = {.rows = 0, .cols = UINT16_MAX}},
	    {.type = PROTO_RESIZE, .u.resize = {.rows = UINT16_MAX, .cols = 1}},
	    {.type = PROTO_EXIT, .u.exit = {.code = 255, .signal = 64}},
	    {.type = PROTO_EXIT, .u.exit = {.code = 0, .signal = 0}},
	    {.type = PROTO_EOF},
	    {.type = PROTO_PS},
	};
	struct proto_buf b = {0};

	for (size_t i = 0; i < ARRAY_SIZE(in); i++) {
		struct proto_msg out;

		roundtrip(&in[i], &out, &b);
		assert_int_equal(out.u.signal.signal, in[i].u.signal.signal);
		assert_int_equal(out.u.resize.rows, in[i].u.resize.rows);
		assert_int_equal(out.u.resize.cols, in[i].u.resize.cols);
		assert_int_equal(out.u.exit.code, in[i].u.exit.code);
		assert_int_equal(out.u.exit.signal, in[i].u.exit.signal);
		assert_null(out.arena);
		proto_msg_free(&out);
	}
	proto_buf_free(&b);
}

static void
test_error(void **state)
{
	char *message = repeat('m', PROTO_MESSAGE_MAX);
	struct proto_buf b = {0};

	for (int code = PROTO_E_PROTOCOL; code < PROTO_E_MAX; code++) {
		struct proto_msg in = {
		    .type = PROTO_ERROR,
		    .u.error = {.code = code, .message = code % 2 ? message : "", .err = code * 3}};
		struct proto_msg out;

		if (code == PROTO_E_INTERNAL)
			in.u.error.err = INT_MAX;
		roundtrip(&in, &out, &b);
		assert_int_equal(out.u.error.code, code);
		assert_string_equal(out.u.error.message, in.u.error.message);
		assert_int_equal(out.u.error.err, in.u.error.err);
		proto_msg_free(&out);
	}
	proto_buf_free(&b);
	free(message);
}

static void
test_tasks(void **state)
{
	char *command = repeat('c', PROTO_MESSAGE_MAX);
	const struct proto_task_info tasks[] = {
	    {.id = 1, .uid = 0, .pid = 2, .started = 0, .session = "", .command = "sh"},
	    {.id = 2,
	     .uid = 1000,
	     .pid = 4194304,
	     .started = 1700000000,
	     .session = "agent",
	     .command = command},
	    {.id = UINT64_MAX,
	     .uid = UINT64_MAX,
	     .pid = UINT64_MAX,
	     .started = UINT64_MAX,
	     .session = "with space\n",
	     .command = "git push"},
	};
	struct proto_msg in = {.type = PROTO_TASKS, .u.tasks = {.tasks = tasks, .n = 3}};
	struct proto_msg out;
	struct proto_buf b = {0};

	roundtrip(&in, &out, &b);
	assert_int_equal(out.u.tasks.n, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct proto_task_info *t = &out.u.tasks.tasks[i];

		assert_true(t->id == tasks[i].id && t->uid == tasks[i].uid &&
		            t->pid == tasks[i].pid && t->started == tasks[i].started);
		assert_string_equal(t->session, tasks[i].session);
		assert_string_equal(t->command, tasks[i].command);
	}
	proto_msg_free(&out);

	in.u.tasks = (typeof(in.u.tasks)){0};
	roundtrip(&in, &out, &b);
	assert_int_equal(out.u.tasks.n, 0);
	proto_msg_free(&out);
	proto_buf_free(&b);
	free(command);
}

static void
test_tasks_max(void **state)
{
	struct proto_task_info *tasks = calloc(PROTO_TASKS_MAX, sizeof(*tasks));
	struct proto_msg in = {.type = PROTO_TASKS,
	                       .u.tasks = {.tasks = tasks, .n = PROTO_TASKS_MAX}};
	struct proto_msg out;
	struct proto_buf b = {0};

	assert_non_null(tasks);
	for (size_t i = 0; i < PROTO_TASKS_MAX; i++)
		tasks[i] = (struct proto_task_info){
		    .id = i + 1, .pid = i * 10, .session = "s", .command = "sleep 1"};
	roundtrip(&in, &out, &b);
	assert_int_equal(out.u.tasks.n, PROTO_TASKS_MAX);
	assert_int_equal(out.u.tasks.tasks[PROTO_TASKS_MAX - 1].id, PROTO_TASKS_MAX);
	assert_string_equal(out.u.tasks.tasks[PROTO_TASKS_MAX - 1].command, "sleep 1");
	proto_msg_free(&out);
	proto_buf_free(&b);
	free(tasks);
}

static void
test_kill(void **state)
{
	const struct proto_msg in[] = {
	    {.type = PROTO_KILL, .u.kill = {.session = "agent-1"}},
	    {.type = PROTO_KILL, .u.kill = {.session = ""}},
	    {.type = PROTO_KILL, .u.kill = {.id = 1}},
	    {.type = PROTO_KILL, .u.kill = {.id = UINT64_MAX}},
	    {.type = PROTO_KILL, .u.kill = {.all = true}},
	};
	struct proto_buf b = {0};

	for (size_t i = 0; i < ARRAY_SIZE(in); i++) {
		struct proto_msg out;

		roundtrip(&in[i], &out, &b);
		if (in[i].u.kill.session)
			assert_string_equal(out.u.kill.session, in[i].u.kill.session);
		else
			assert_null(out.u.kill.session);
		assert_true(out.u.kill.id == in[i].u.kill.id);
		assert_int_equal(out.u.kill.all, in[i].u.kill.all);
		proto_msg_free(&out);
	}
	proto_buf_free(&b);
}

/* Frames appended to one buffer follow each other, each with its own header. */
static void
test_append(void **state)
{
	const struct proto_msg a = {.type = PROTO_EOF};
	const struct proto_msg c = {.type = PROTO_SIGNAL, .u.signal = {.signal = 9}};
	struct proto_buf b = {0};
	struct proto_msg out;
	uint32_t len1, len2;

	assert_int_equal(proto_encode(&b, &a), 0);
	assert_int_equal(proto_encode(&b, &c), 0);
	assert_int_equal(proto_frame_length(b.p, &len1), 0);
	assert_int_equal(proto_frame_length(b.p + PROTO_HEADER_SIZE + len1, &len2), 0);
	assert_int_equal(b.len, 2 * PROTO_HEADER_SIZE + len1 + len2);
	assert_int_equal(proto_decode(b.p + 2 * PROTO_HEADER_SIZE + len1, len2, &out, NULL, 0), 0);
	assert_int_equal(out.type, PROTO_SIGNAL);
	assert_int_equal(out.u.signal.signal, 9);
	proto_msg_free(&out);
	proto_buf_free(&b);
	assert_null(b.p);
	assert_int_equal(b.len, 0);
}

/* What the encoder never writes but a peer may: any key order, bin strings, wide ints. */
static void
test_decode_accepts(void **state)
{
	static const uint8_t wide[] = "\x82\xa1t\xa6signal\xa6signal\xcf\0\0\0\0\0\0\0\x05";
	static const uint8_t int8[] = "\x82\xa1t\xa6signal\xa6signal\xd0\x05";
	struct proto_msg m;

	decode_ok("{'ticket':b'tk', 'version':1, 't':b'hello'}", &m);
	assert_int_equal(m.type, PROTO_HELLO);
	assert_string_equal(m.u.hello.ticket, "tk");
	proto_msg_free(&m);
	decode_ok("{'t':'error', 'code':1, 'message':'', 'errno':0}", &m);
	assert_int_equal(m.u.error.err, 0);
	assert_string_equal(m.u.error.message, "");
	proto_msg_free(&m);
	decode_ok("{'t':'exec', 'argv':[b'a\\xff'], 'env':['=x'], 'cwd':b'/', 'tty':F, 'rows':0, "
	          "'cols':0}",
	          &m);
	assert_string_equal(m.u.exec.argv[0], "a\xff");
	assert_string_equal(m.u.exec.env[0], "=x");
	proto_msg_free(&m);
	assert_int_equal(proto_decode(wide, sizeof(wide) - 1, &m, NULL, 0), 0);
	assert_int_equal(m.u.signal.signal, 5);
	proto_msg_free(&m);
	assert_int_equal(proto_decode(int8, sizeof(int8) - 1, &m, NULL, 0), 0);
	assert_int_equal(m.u.signal.signal, 5);
	proto_msg_free(&m);
}

/* ---- the data header ---- */

static void
test_data_header(void **state)
{
	static const enum proto_type types[] = {PROTO_STDIN, PROTO_STDOUT, PROTO_STDERR};
	static const size_t lens[] = {0, 1, 31, 32, 255, 256, 65535, PROTO_CHUNK_MAX};
	uint8_t *payload = calloc(1, PROTO_CHUNK_MAX);

	assert_non_null(payload);
	for (size_t t = 0; t < ARRAY_SIZE(types); t++)
		for (size_t l = 0; l < ARRAY_SIZE(lens); l++) {
			struct proto_msg m = {.type = types[t],
			                      .u.data = {.data = payload, .len = lens[l]}};
			struct proto_buf b = {0};
			uint8_t hdr[PROTO_DATA_HEADER_MAX];
			int n = proto_data_header(types[t], lens[l], hdr);

			assert_in_range(n, 1, PROTO_DATA_HEADER_MAX);
			assert_int_equal(proto_encode(&b, &m), 0);
			assert_int_equal(n + lens[l], b.len);
			assert_memory_equal(hdr, b.p, n);
			proto_buf_free(&b);
		}
	free(payload);
}

static void
test_data_header_refuses(void **state)
{
	uint8_t hdr[PROTO_DATA_HEADER_MAX];

	assert_int_equal(proto_data_header(PROTO_STDOUT, PROTO_CHUNK_MAX + 1, hdr), -EINVAL);
	assert_int_equal(proto_data_header(PROTO_STDOUT, SIZE_MAX, hdr), -EINVAL);
	assert_int_equal(proto_data_header(PROTO_EXEC, 1, hdr), -EINVAL);
	assert_int_equal(proto_data_header(PROTO_EOF, 0, hdr), -EINVAL);
	assert_int_equal(proto_data_header(0, 0, hdr), -EINVAL);
	assert_int_equal(proto_data_header(PROTO_TYPE_MAX, 0, hdr), -EINVAL);
}

/* ---- headers and names ---- */

static void
test_frame_length(void **state)
{
	static const struct {
		uint8_t header[PROTO_HEADER_SIZE];
		int ret;
		uint32_t len;
	} cases[] = {
	    {{0, 0, 0, 0}, -EMSGSIZE, 0},
	    {{0, 0, 0, 1}, 0, 1},
	    {{0, 0, 1, 2}, 0, 0x102},
	    {{0, 0x40, 0, 0}, 0, PROTO_FRAME_MAX},
	    {{0, 0x40, 0, 1}, -EMSGSIZE, 0},
	    {{0x01, 0, 0, 0}, -EMSGSIZE, 0},
	    {{0xff, 0xff, 0xff, 0xff}, -EMSGSIZE, 0},
	};

	assert_int_equal(PROTO_FRAME_MAX, 0x400000);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint32_t len = 0xdead;

		assert_int_equal(proto_frame_length(cases[i].header, &len), cases[i].ret);
		assert_int_equal(len, cases[i].ret ? 0xdead : cases[i].len);
	}
}

static void
test_names(void **state)
{
	static const char *const types[PROTO_TYPE_MAX] = {
	    "?",      "hello", "exec", "started", "stdin", "stdout", "stderr", "signal",
	    "resize", "eof",   "exit", "error",   "ps",    "tasks",  "kill",   "killed",
	};
	static const char *const errors[PROTO_E_MAX] = {
	    "?", "protocol", "version", "denied", "exec", "limit", "ticket", "shutdown", "internal",
	};

	for (int t = 0; t < PROTO_TYPE_MAX; t++)
		assert_string_equal(proto_type_name(t), types[t]);
	assert_string_equal(proto_type_name(PROTO_TYPE_MAX), "?");
	assert_string_equal(proto_type_name((enum proto_type) - 1), "?");
	for (int e = 0; e < PROTO_E_MAX; e++)
		assert_string_equal(proto_error_name(e), errors[e]);
	assert_string_equal(proto_error_name(PROTO_E_MAX), "?");
	assert_string_equal(proto_error_name((enum proto_error) - 1), "?");
}

/* ---- the encoder refuses what the decoder would ---- */

static void
expect_refused(const struct proto_msg *m, size_t i)
{
	static const char before[] = "earlier frames";
	struct proto_buf b = {.p = (uint8_t *)strdup(before), .len = strlen(before)};

	assert_non_null(b.p);
	b.cap = b.len + 1;
	if (proto_encode(&b, m) != -EINVAL)
		fail_msg("case %zu (%s): encoded", i, proto_type_name(m->type));
	assert_int_equal(b.len, strlen(before));
	assert_memory_equal(b.p, before, b.len);
	proto_buf_free(&b);
}

static void
test_encode_refuses(void **state)
{
	char *ticket = repeat('t', PROTO_TICKET_MAX + 1);
	char *name = repeat('n', PROTO_NAME_MAX + 1);
	char *message = repeat('m', PROTO_MESSAGE_MAX + 1);
	char *cwd = repeat('/', PROTO_PATH_MAX);
	const char **many = calloc(PROTO_ARGS_MAX + 2, sizeof(*many));
	const char *argv[] = {"sh", NULL}, *holed[] = {"sh", NULL, "x", NULL};
	const char *noeq[] = {"A=1", "B", NULL}, *env[] = {"A=1", NULL};
	const struct proto_task_info no_cmd[] = {{.id = 1, .session = "s"}};
	const struct proto_task_info long_cmd[] = {{.id = 1, .session = "s", .command = message}};
	const uint8_t byte = 0;
#define BAD_EXEC(av, ac, ev, ec, dir, sess)                                                        \
	{                                                                                          \
		.type = PROTO_EXEC, .u.exec = {                                                    \
			.argv = av,                                                                \
			.argc = ac,                                                                \
			.env = ev,                                                                 \
			.envc = ec,                                                                \
			.cwd = dir,                                                                \
			.session = sess                                                            \
		}                                                                                  \
	}
	const struct proto_msg bad[] = {
	    {.type = 0},
	    {.type = PROTO_TYPE_MAX},
	    {.type = PROTO_HELLO, .u.hello = {.version = 1, .ticket = ticket}},
	    BAD_EXEC(argv, 0, env, 1, "/", NULL),
	    BAD_EXEC(NULL, 1, env, 1, "/", NULL),
	    BAD_EXEC(many, PROTO_ARGS_MAX + 1, env, 1, "/", NULL),
	    BAD_EXEC(holed, 3, env, 1, "/", NULL),
	    BAD_EXEC(argv, 1, noeq, 2, "/", NULL),
	    BAD_EXEC(argv, 1, many, PROTO_ARGS_MAX + 1, "/", NULL),
	    BAD_EXEC(argv, 1, NULL, 1, "/", NULL),
	    BAD_EXEC(argv, 1, env, 1, NULL, NULL),
	    BAD_EXEC(argv, 1, env, 1, "relative", NULL),
	    BAD_EXEC(argv, 1, env, 1, "", NULL),
	    BAD_EXEC(argv, 1, env, 1, cwd, NULL),
	    BAD_EXEC(argv, 1, env, 1, "/", name),
	    {.type = PROTO_STDIN, .u.data = {.data = &byte, .len = PROTO_CHUNK_MAX + 1}},
	    {.type = PROTO_STDOUT, .u.data = {.data = NULL, .len = 1}},
	    {.type = PROTO_SIGNAL, .u.signal = {.signal = 0}},
	    {.type = PROTO_SIGNAL, .u.signal = {.signal = 65}},
	    {.type = PROTO_SIGNAL, .u.signal = {.signal = -9}},
	    {.type = PROTO_EXIT, .u.exit = {.code = 256}},
	    {.type = PROTO_EXIT, .u.exit = {.code = -1}},
	    {.type = PROTO_EXIT, .u.exit = {.signal = 65}},
	    {.type = PROTO_ERROR, .u.error = {.code = 0, .message = "m"}},
	    {.type = PROTO_ERROR, .u.error = {.code = PROTO_E_MAX, .message = "m"}},
	    {.type = PROTO_ERROR, .u.error = {.code = PROTO_E_EXEC, .message = NULL}},
	    {.type = PROTO_ERROR, .u.error = {.code = PROTO_E_EXEC, .message = message}},
	    {.type = PROTO_ERROR, .u.error = {.code = PROTO_E_EXEC, .message = "m", .err = -1}},
	    {.type = PROTO_TASKS, .u.tasks = {.tasks = NULL, .n = 1}},
	    {.type = PROTO_TASKS, .u.tasks = {.tasks = no_cmd, .n = PROTO_TASKS_MAX + 1}},
	    {.type = PROTO_TASKS, .u.tasks = {.tasks = no_cmd, .n = 1}},
	    {.type = PROTO_TASKS, .u.tasks = {.tasks = long_cmd, .n = 1}},
	    {.type = PROTO_KILL},
	    {.type = PROTO_KILL, .u.kill = {.session = "s", .id = 1}},
	    {.type = PROTO_KILL, .u.kill = {.id = 1, .all = true}},
	    {.type = PROTO_KILL, .u.kill = {.session = "s", .all = true}},
	};
#undef BAD_EXEC

	assert_non_null(many);
	for (size_t i = 0; i <= PROTO_ARGS_MAX; i++)
		many[i] = "A=1";
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_refused(&bad[i], i);
	free(ticket);
	free(name);
	free(message);
	free(cwd);
	free(many);
}

/* Each argument fits, the frame does not: refused, and the buffer as it was. */
static void
test_encode_too_big(void **state)
{
	char *arg = repeat('a', 100);
	const char **argv = calloc(PROTO_ARGS_MAX + 1, sizeof(*argv));
	struct proto_msg m = {.type = PROTO_EXEC,
	                      .u.exec = {.argv = argv, .argc = PROTO_ARGS_MAX, .cwd = "/"}};

	assert_non_null(argv);
	for (size_t i = 0; i < PROTO_ARGS_MAX; i++)
		argv[i] = arg;
	expect_refused(&m, 0);
	free(argv);
	free(arg);
}

/* ---- malformed bodies ---- */

struct bad {
	const char *body; /* the notation, or len raw bytes */
	size_t len;
	bool raw;
	const char *err; /* a part of the reason */
};

#define DSL(s, e)                                                                                  \
	{                                                                                          \
		s, 0, false, e                                                                     \
	}
#define RAW(s, e)                                                                                  \
	{                                                                                          \
		s, sizeof(s) - 1, true, e                                                          \
	}
/* An exec with these fields; more ends with the fields after rows. */
#define EXEC(argv, env, cwd, tty, rows, more)                                                      \
	"{'t':'exec','argv':" argv ",'env':" env ",'cwd':" cwd ",'tty':" tty ",'rows':" rows more  \
	"}"
#define COLS ",'cols':1"
#define TASK "'id':1,'session':'s','uid':0,'pid':2,'started':3"

static const struct bad bad_bodies[] = {
    /* framing */
    RAW("", "frame: truncated"),
    RAW("\x81", "frame: truncated"),
    RAW("\x81\xa1t", "frame: truncated"),
    RAW("\x81\xa1t\xa5hel", "frame: truncated"),
    RAW("\x81\xa1t\xda\x00", "frame: truncated"),
    RAW("\x82\xa1t\xa6killed\xa5"
        "count\xcf\x00",
        "frame: truncated"),
    RAW("\xdd\xff\xff\xff\xff", "frame: truncated"),
    RAW("\xdf\xff\xff\xff\xff", "frame: truncated"),
    RAW("\xdb\xff\xff\xff\xff", "frame: truncated"),
    RAW("\x82\xa1t\xa5tasks\xa5tasks\xdd\x7f\xff\xff\xff\x80", "frame: truncated"),
    RAW("\xc1", "frame: invalid byte 0xc1 at offset 0"),
    RAW("\x81\xa1t\xc1", "frame: invalid byte 0xc1 at offset 3"),
    RAW("\x81\xa1t\xa2ps\x00", "frame: 1 trailing bytes after the map"),
    RAW("\x81\xa1t\xa2ps\x81\xa1t\xa2ps", "frame: 6 trailing bytes after the map"),
    RAW("\x92\x01\x02", "frame: expected a map, got an array"),
    RAW("\x05", "frame: expected a map, got an unsigned integer"),
    RAW("\xc0", "frame: expected a map, got nil"),
    RAW("\xa2ps", "frame: expected a map, got a string"),
    RAW("\x82\xa1t\xa6killed\xa5"
        "count\xd4\x01\x00",
        "killed.count: expected an unsigned integer, got an extension"),
    RAW("\x82\xa1t\xa6signal\xa6signal\xca\x41\x20\x00\x00",
        "signal.signal: expected an unsigned integer, got a float"),
    DSL("{'t':'ps','x':[[[1]]]}", "frame: nested too deeply"),
    DSL("{'t':'exec','argv':[N*140000]}", "frame: more than 131104 values"),
    /* the type */
    DSL("{}", "frame.t: missing"),
    DSL("{'type':'ps'}", "frame.t: missing"),
    DSL("{'t':5}", "frame.t: expected a string, got an unsigned integer"),
    DSL("{'t':'nope'}", "frame.t: unknown type \"nope\""),
    DSL("{'t':'HELLO','version':1}", "frame.t: unknown type \"HELLO\""),
    DSL("{'t':'ps\\0'}", "frame.t: contains a NUL byte"),
    DSL("{'t':''}", "frame.t: unknown type \"\""),
    /* keys */
    DSL("{'t':'hello','version':1,'version':1}", "hello.version: repeated key"),
    DSL("{'t':'hello','t':'hello','version':1}", "hello.t: repeated key"),
    DSL("{'t':'hello','version':1,'extra':1}", "hello: unknown key \"extra\""),
    DSL("{'t':'ps','\\x01\"\\\\':1}", "ps: unknown key \"\\x01\\x22\\x5c\""),
    DSL("{'t':'ps','k'^100:1}",
        "ps: unknown key \"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...\""),
    DSL("{'t':'hello','version':1,1:1}", "hello: expected a string key, got an unsigned integer"),
    DSL("{'t':'hello',b'version':1}", "hello: expected a string key, got binary data"),
    DSL("{'t':'eof','x':1}", "eof: unknown key \"x\""),
    DSL("{'t':'ps','all':T}", "ps: unknown key \"all\""),
    /* hello */
    DSL("{'t':'hello'}", "hello.version: missing"),
    DSL("{'t':'hello','version':'1'}", "hello.version: expected an unsigned integer, got a string"),
    DSL("{'t':'hello','version':-1}",
        "hello.version: expected an unsigned integer, got a negative integer"),
    DSL("{'t':'hello','version':1.5}", "hello.version: expected an unsigned integer, got a float"),
    DSL("{'t':'hello','version':N}", "hello.version: expected an unsigned integer, got nil"),
    DSL("{'t':'hello','version':1,'ticket':'x'^129}", "hello.ticket: longer than 128 bytes"),
    DSL("{'t':'hello','version':1,'ticket':'a\\0b'}", "hello.ticket: contains a NUL byte"),
    DSL("{'t':'hello','version':1,'ticket':7}", "hello.ticket: expected a string"),
    /* exec */
    DSL("{'t':'exec','env':[],'cwd':'/','tty':F,'rows':1,'cols':1}", "exec.argv: missing"),
    DSL(EXEC("[]", "[]", "'/'", "F", "1", COLS), "exec.argv: 0 entries, expected 1..65536"),
    DSL(EXEC("'ls'", "[]", "'/'", "F", "1", COLS), "exec.argv: expected an array, got a string"),
    DSL(EXEC("['a','b','c','d\\0']", "[]", "'/'", "F", "1", COLS),
        "exec.argv[3]: contains a NUL byte"),
    DSL(EXEC("['a',5]", "[]", "'/'", "F", "1", COLS),
        "exec.argv[1]: expected a string, got an unsigned integer"),
    DSL(EXEC("['a'*65537]", "[]", "'/'", "F", "1", COLS),
        "exec.argv: 65537 entries, expected 1..65536"),
    DSL(EXEC("['a']", "['A=1','B']", "'/'", "F", "1", COLS),
        "exec.env[1]: not of the form NAME=VALUE"),
    DSL(EXEC("['a']", "N", "'/'", "F", "1", COLS), "exec.env: expected an array, got nil"),
    DSL(EXEC("['a']", "['A=\\0']", "'/'", "F", "1", COLS), "exec.env[0]: contains a NUL byte"),
    DSL(EXEC("['a']", "[]", "'rel/dir'", "F", "1", COLS), "exec.cwd: not an absolute path"),
    DSL(EXEC("['a']", "[]", "''", "F", "1", COLS), "exec.cwd: not an absolute path"),
    DSL(EXEC("['a']", "[]", "'/'^4096", "F", "1", COLS), "exec.cwd: longer than 4095 bytes"),
    DSL(EXEC("['a']", "[]", "'/\\0'", "F", "1", COLS), "exec.cwd: contains a NUL byte"),
    DSL(EXEC("['a']", "[]", "'/'", "1", "1", COLS),
        "exec.tty: expected a boolean, got an unsigned integer"),
    DSL(EXEC("['a']", "[]", "'/'", "F", "65536", COLS),
        "exec.rows: 65536 is out of range 0..65535"),
    DSL(EXEC("['a']", "[]", "'/'", "F", "1", ""), "exec.cols: missing"),
    DSL(EXEC("['a']", "[]", "'/'", "F", "1", COLS ",'path':5"),
        "exec.path: expected a string, got an unsigned"),
    DSL(EXEC("['a']", "[]", "'/'", "F", "1", COLS ",'path':'/bin/\\0sh'"),
        "exec.path: contains a NUL byte"),
    DSL(EXEC("['a']", "[]", "'/'", "F", "1", COLS ",'session':'x'^129"),
        "exec.session: longer than 128 bytes"),
    DSL(EXEC("['a']", "[]", "'/'", "F", "1", COLS ",'session':'a','session':'a'"),
        "exec.session: repeated key"),
    DSL(EXEC("['a']", "[]", "'/'", "F", "1", COLS ",'umask':512"),
        "exec.umask: 512 is out of range 0..511"),
    DSL(EXEC("['a']", "[]", "'/'", "F", "1", COLS ",'umask':-1"),
        "exec.umask: expected an unsigned integer, got a negative integer"),
    DSL(EXEC("['a']", "[]", "'/'", "F", "1", COLS ",'umask':T"),
        "exec.umask: expected an unsigned integer, got a boolean"),
    DSL(EXEC("['a']", "[]", "'/'", "F", "1", COLS ",'sigign':'x'"),
        "exec.sigign: expected an unsigned integer, got a string"),
    /* started, data, signal, resize, exit */
    DSL("{'t':'started','id':-1,'pid':1}",
        "started.id: expected an unsigned integer, got a negative integer"),
    DSL("{'t':'started','id':1}", "started.pid: missing"),
    DSL("{'t':'stdin','data':'abc'}", "stdin.data: expected binary data, got a string"),
    DSL("{'t':'stdout','data':b'x'^65537}", "stdout.data: longer than 65536 bytes"),
    DSL("{'t':'stderr'}", "stderr.data: missing"),
    DSL("{'t':'signal','signal':0}", "signal.signal: 0 is out of range 1..64"),
    DSL("{'t':'signal','signal':65}", "signal.signal: 65 is out of range 1..64"),
    DSL("{'t':'signal','signal':T}", "signal.signal: expected an unsigned integer, got a boolean"),
    DSL("{'t':'resize','rows':1,'cols':-1}", "resize.cols: expected an unsigned integer"),
    DSL("{'t':'resize','rows':70000,'cols':1}", "resize.rows: 70000 is out of range 0..65535"),
    DSL("{'t':'exit','code':256,'signal':0}", "exit.code: 256 is out of range 0..255"),
    DSL("{'t':'exit','code':0,'signal':65}", "exit.signal: 65 is out of range 0..64"),
    DSL("{'t':'exit','code':18446744073709551615,'signal':0}",
        "exit.code: 18446744073709551615 is out of range 0..255"),
    /* error */
    DSL("{'t':'error','code':0,'message':''}", "error.code: 0 is out of range 1..8"),
    DSL("{'t':'error','code':9,'message':''}", "error.code: 9 is out of range 1..8"),
    DSL("{'t':'error','code':1}", "error.message: missing"),
    DSL("{'t':'error','code':1,'message':'m'^4097}", "error.message: longer than 4096 bytes"),
    DSL("{'t':'error','code':1,'message':'','errno':2147483648}",
        "error.errno: 2147483648 is out of range 0..2147483647"),
    /* tasks */
    DSL("{'t':'tasks','tasks':{}}", "tasks.tasks: expected an array, got a map"),
    DSL("{'t':'tasks','tasks':[5]}", "tasks.tasks[0]: expected a map, got an unsigned integer"),
    DSL("{'t':'tasks','tasks':[{" TASK ",'command':'c'},{" TASK "}]}",
        "tasks.tasks[1].command: missing"),
    DSL("{'t':'tasks','tasks':[{" TASK ",'command':'c','t':'x'}]}",
        "tasks.tasks[0]: unknown key \"t\""),
    DSL("{'t':'tasks','tasks':[{" TASK ",'command':'c'^4097}]}",
        "tasks.tasks[0].command: longer than 4096 bytes"),
    DSL("{'t':'tasks','tasks':[{" TASK ",'command':'c','id':2}]}", "tasks.tasks[0].id: repeated"),
    DSL("{'t':'tasks','tasks':[{" TASK ",'command':'c','session':'\\0'}]}",
        "tasks.tasks[0].session: repeated key"),
    DSL("{'t':'tasks','tasks':[{'id':1,'session':'\\0'}]}",
        "tasks.tasks[0].session: contains a NUL byte"),
    DSL("{'t':'tasks','tasks':[{}*4097]}", "tasks.tasks: 4097 entries, expected 0..4096"),
    /* kill, killed */
    DSL("{'t':'kill'}", "kill: expected exactly one of session, id and all"),
    DSL("{'t':'kill','session':'s','id':1}", "kill: expected exactly one of session, id and all"),
    DSL("{'t':'kill','id':1,'all':T}", "kill: expected exactly one of session, id and all"),
    DSL("{'t':'kill','session':'','all':T}", "kill: expected exactly one"),
    DSL("{'t':'kill','all':F}", "kill.all: must be true"),
    DSL("{'t':'kill','id':0}", "kill.id: 0 is out of range 1..18446744073709551615"),
    DSL("{'t':'kill','session':5}", "kill.session: expected a string, got an unsigned integer"),
    DSL("{'t':'killed','count':T}", "killed.count: expected an unsigned integer, got a boolean"),
    DSL("{'t':'killed'}", "killed.count: missing"),
};

static void
test_malformed(void **state)
{
	assert_true(ARRAY_SIZE(bad_bodies) >= 40);
	for (size_t i = 0; i < ARRAY_SIZE(bad_bodies); i++) {
		const struct bad *c = &bad_bodies[i];
		size_t len = c->len;
		uint8_t *body = c->raw ? NULL : body_of(c->body, &len);
		struct proto_msg m;
		char err[256] = "";
		int r;

		memset(&m, 0xa5, sizeof(m));
		r = proto_decode(body ? body : (const uint8_t *)c->body, len, &m, err, sizeof(err));
		if (r != -EBADMSG || !strstr(err, c->err))
			fail_msg("case %zu %s: got %d \"%s\", want \"%s\"", i,
			         c->raw ? "(raw)" : c->body, r, err, c->err);
		/* Written only on success. */
		for (size_t j = 0; j < sizeof(m); j++)
			assert_int_equal(((uint8_t *)&m)[j], 0xa5);
		free(body);
	}
}

/* Nesting far deeper than msgpack-c's own stack of 32, arrays and maps. */
static void
test_deep_nesting(void **state)
{
	enum { DEPTH = 100000 };
	uint8_t *body = malloc(3 * DEPTH + 1);
	struct proto_msg m;
	char err[128] = "";

	assert_non_null(body);
	memset(body, 0x91, DEPTH);
	body[DEPTH] = 0;
	assert_int_equal(proto_decode(body, DEPTH + 1, &m, err, sizeof(err)), -EBADMSG);
	assert_string_equal(err, "frame: nested too deeply");
	for (size_t i = 0; i < DEPTH; i++)
		memcpy(body + 3 * i, "\x81\xa1k", 3);
	body[3 * DEPTH] = 0;
	assert_int_equal(proto_decode(body, 3 * DEPTH + 1, &m, err, sizeof(err)), -EBADMSG);
	assert_string_equal(err, "frame: nested too deeply");
	free(body);
}

/* The reason is cut to errsize, and no err at all is fine. */
static void
test_err_buffer(void **state)
{
	static const uint8_t body[] = "\x81\xa1t\xa4nope";
	struct proto_msg m;
	char err[8];

	memset(err, 'x', sizeof(err));
	assert_int_equal(proto_decode(body, sizeof(body) - 1, &m, err, sizeof(err)), -EBADMSG);
	assert_string_equal(err, "frame.t");
	assert_int_equal(proto_decode(body, sizeof(body) - 1, &m, err, 1), -EBADMSG);
	assert_string_equal(err, "");
	assert_int_equal(proto_decode(body, sizeof(body) - 1, &m, NULL, 0), -EBADMSG);
}

static void
test_msg_free(void **state)
{
	struct proto_msg zero = {0}, m;

	proto_msg_free(&zero);
	proto_msg_free(&zero);
	proto_msg_free(NULL);
	assert_null(zero.arena);
	decode_ok("{'t':'hello','version':1,'ticket':'abc'}", &m);
	assert_non_null(m.arena);
	proto_msg_free(&m);
	assert_null(m.arena);
	assert_null(m.u.hello.ticket);
	proto_msg_free(&m);
	proto_buf_free(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hello),          cmocka_unit_test(test_stdio_pipe),
	    cmocka_unit_test(test_exec),           cmocka_unit_test(test_exec_minimal),
	    cmocka_unit_test(test_exec_max_args),  cmocka_unit_test(test_started_killed),
	    cmocka_unit_test(test_data),           cmocka_unit_test(test_small_frames),
	    cmocka_unit_test(test_error),          cmocka_unit_test(test_tasks),
	    cmocka_unit_test(test_tasks_max),      cmocka_unit_test(test_kill),
	    cmocka_unit_test(test_append),         cmocka_unit_test(test_decode_accepts),
	    cmocka_unit_test(test_data_header),    cmocka_unit_test(test_data_header_refuses),
	    cmocka_unit_test(test_frame_length),   cmocka_unit_test(test_names),
	    cmocka_unit_test(test_encode_refuses), cmocka_unit_test(test_encode_too_big),
	    cmocka_unit_test(test_malformed),      cmocka_unit_test(test_deep_nesting),
	    cmocka_unit_test(test_err_buffer),     cmocka_unit_test(test_msg_free),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
