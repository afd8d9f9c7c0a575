/* SPDX-License-Identifier: MIT */
/*
 * The runner wire protocol (include/moat/proto.h). Every frame type is a table
 * of fields; the decoder and the encoder both walk that table, so what one side
 * writes the other accepts, and the bounds are written down once.
 *
 * Decoding takes three steps. scan() walks the msgpack headers of the body
 * without building anything: msgpack-c allocates the objects of an array or a
 * map as soon as it reads the header, so the five bytes "array of 2^32 - 1" would
 * cost it 96 GiB. scan() refuses a container that announces more values than
 * bytes remain, nesting deeper than any frame has, more values than any frame
 * has, and bytes after the map. msgpack_unpack_next() then builds the objects
 * (their strings point into the body). Last, the type's field table is applied
 * twice: a measuring pass checks every field and sums what the strings and
 * arrays need, and a filling pass copies them into one arena of that size.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <msgpack.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "moat/macro.h"
#include "moat/proto.h"

/* A frame is a map (1) whose tasks (2) are maps (3): nothing valid nests deeper. */
#define DEPTH_MAX 3
/* No valid frame holds more values than an exec with a full argv and env, plus its keys. */
#define VALUES_MAX (2 * PROTO_ARGS_MAX + 32)
#define STR_ANY    UINT32_MAX /* msgpack's own bound */
#define SIGNAL_MAX 64

/* Where a field's value lives in struct proto_msg or struct proto_task_info. */
#define SLOT(T, base, off)  (*(T *)((char *)(base) + (off)))
#define CSLOT(T, base, off) (*(T const *)((const char *)(base) + (off)))

_Static_assert(sizeof(enum proto_error) == sizeof(int), "error.code is stored as an int");

/* ---- field tables ---- */

enum kind {
	K_TYPE,  /* "t": read before the other fields */
	K_U64,   /* uint64_t */
	K_U16,   /* uint16_t */
	K_INT,   /* int (or enum proto_error) */
	K_BOOL,  /* bool */
	K_STR,   /* const char *, copied */
	K_STRV,  /* const char *const *, NULL-terminated, its count at .count */
	K_BIN,   /* const uint8_t * into the body, its length at .count */
	K_TASKS, /* const struct proto_task_info *, its count at .count */
	K_MAX,
};

enum {
	F_REQUIRED = 1 << 0,
	F_ABSOLUTE = 1 << 1, /* a string starting with '/' */
	F_ASSIGN = 1 << 2,   /* a string holding '=' */
	F_HAS = 1 << 3,      /* an optional integer whose zero counts: a bool at .count says */
};

struct field {
	const char *name;
	uint8_t kind, flags;
	uint16_t off, count; /* where the value and its length or count are stored */
	uint64_t min, max;   /* an integer's range, an array's count, a string's length */
};

#define REQ   F_REQUIRED
#define M(m)  offsetof(struct proto_msg, u.m)
#define TI(m) offsetof(struct proto_task_info, m)
#define T_FIELD                                                                                    \
	{                                                                                          \
		.name = "t", .kind = K_TYPE, .flags = REQ                                          \
	}

static const struct field hello_fields[] = {
    T_FIELD,
    /* Any version: the runner answers one it does not speak with PROTO_E_VERSION. */
    {"version", K_U64, REQ, M(hello.version), 0, 0, UINT64_MAX},
    {"ticket", K_STR, 0, M(hello.ticket), 0, 0, PROTO_TICKET_MAX},
    {"fds", K_U16, 0, M(hello.fds), 0, 0, 7},
    {"closed", K_U16, 0, M(hello.closed), 0, 0, 7},
};

static const struct field exec_fields[] = {
    T_FIELD,
    {"argv", K_STRV, REQ, M(exec.argv), M(exec.argc), 1, PROTO_ARGS_MAX},
    {"env", K_STRV, REQ | F_ASSIGN, M(exec.env), M(exec.envc), 0, PROTO_ARGS_MAX},
    {"cwd", K_STR, REQ | F_ABSOLUTE, M(exec.cwd), 0, 0, PROTO_PATH_MAX - 1},
    {"tty", K_BOOL, REQ, M(exec.tty), 0, 0, 1},
    {"rows", K_U16, REQ, M(exec.rows), 0, 0, UINT16_MAX},
    {"cols", K_U16, REQ, M(exec.cols), 0, 0, UINT16_MAX},
    {"path", K_STR, 0, M(exec.path), 0, 0, STR_ANY},
    {"session", K_STR, 0, M(exec.session), 0, 0, PROTO_NAME_MAX},
    {"umask", K_U16, F_HAS, M(exec.umask), M(exec.has_umask), 0, 0777},
    {"sigign", K_U64, 0, M(exec.sigign), 0, 0, UINT64_MAX},
};

static const struct field started_fields[] = {
    T_FIELD,
    {"id", K_U64, REQ, M(started.id), 0, 0, UINT64_MAX},
    {"pid", K_U64, REQ, M(started.pid), 0, 0, UINT64_MAX},
};

static const struct field data_fields[] = {
    T_FIELD,
    {"data", K_BIN, REQ, M(data.data), M(data.len), 0, PROTO_CHUNK_MAX},
};

static const struct field signal_fields[] = {
    T_FIELD,
    {"signal", K_INT, REQ, M(signal.signal), 0, 1, SIGNAL_MAX},
};

static const struct field resize_fields[] = {
    T_FIELD,
    {"rows", K_U16, REQ, M(resize.rows), 0, 0, UINT16_MAX},
    {"cols", K_U16, REQ, M(resize.cols), 0, 0, UINT16_MAX},
};

static const struct field bare_fields[] = {
    T_FIELD,
};

static const struct field exit_fields[] = {
    T_FIELD,
    {"code", K_INT, REQ, M(exit.code), 0, 0, 255},
    {"signal", K_INT, REQ, M(exit.signal), 0, 0, SIGNAL_MAX},
};

static const struct field error_fields[] = {
    T_FIELD,
    {"code", K_INT, REQ, M(error.code), 0, PROTO_E_PROTOCOL, PROTO_E_MAX - 1},
    {"message", K_STR, REQ, M(error.message), 0, 0, PROTO_MESSAGE_MAX},
    {"errno", K_INT, 0, M(error.err), 0, 0, INT_MAX},
};

static const struct field task_fields[] = {
    {"id", K_U64, REQ, TI(id), 0, 0, UINT64_MAX},
    {"session", K_STR, REQ, TI(session), 0, 0, STR_ANY},
    {"uid", K_U64, REQ, TI(uid), 0, 0, UINT64_MAX},
    {"pid", K_U64, REQ, TI(pid), 0, 0, UINT64_MAX},
    {"started", K_U64, REQ, TI(started), 0, 0, UINT64_MAX},
    {"command", K_STR, REQ, TI(command), 0, 0, PROTO_MESSAGE_MAX},
};

static const struct field tasks_fields[] = {
    T_FIELD,
    {"tasks", K_TASKS, REQ, M(tasks.tasks), M(tasks.n), 0, PROTO_TASKS_MAX},
};

/* An optional field is absent when zero, so id starts at 1 and all must be true. */
static const struct field kill_fields[] = {
    T_FIELD,
    {"session", K_STR, 0, M(kill.session), 0, 0, STR_ANY},
    {"id", K_U64, 0, M(kill.id), 0, 1, UINT64_MAX},
    {"all", K_BOOL, 0, M(kill.all), 0, 1, 1},
};

static const struct field killed_fields[] = {
    T_FIELD,
    {"count", K_U64, REQ, M(killed.count), 0, 0, UINT64_MAX},
};

static const char *
kill_check(const struct proto_msg *m)
{
	int n = !!m->u.kill.session + !!m->u.kill.id + m->u.kill.all;

	return n == 1 ? NULL : "expected exactly one of session, id and all";
}

struct type_spec {
	const char *name;
	const struct field *fields;
	size_t n;
	const char *(*check)(const struct proto_msg *m); /* across fields: why not, or NULL */
};

#define TYPE(name, fields)                                                                         \
	{                                                                                          \
		name, fields, ARRAY_SIZE(fields), NULL                                             \
	}

static const struct type_spec types[PROTO_TYPE_MAX] = {
    [PROTO_HELLO] = TYPE("hello", hello_fields),
    [PROTO_EXEC] = TYPE("exec", exec_fields),
    [PROTO_STARTED] = TYPE("started", started_fields),
    [PROTO_STDIN] = TYPE("stdin", data_fields),
    [PROTO_STDOUT] = TYPE("stdout", data_fields),
    [PROTO_STDERR] = TYPE("stderr", data_fields),
    [PROTO_SIGNAL] = TYPE("signal", signal_fields),
    [PROTO_RESIZE] = TYPE("resize", resize_fields),
    [PROTO_EOF] = TYPE("eof", bare_fields),
    [PROTO_EXIT] = TYPE("exit", exit_fields),
    [PROTO_ERROR] = TYPE("error", error_fields),
    [PROTO_PS] = TYPE("ps", bare_fields),
    [PROTO_TASKS] = TYPE("tasks", tasks_fields),
    [PROTO_KILL] = {"kill", kill_fields, ARRAY_SIZE(kill_fields), kill_check},
    [PROTO_KILLED] = TYPE("killed", killed_fields),
};

static const char *const error_names[PROTO_E_MAX] = {
    [PROTO_E_PROTOCOL] = "protocol", [PROTO_E_VERSION] = "version",   [PROTO_E_DENIED] = "denied",
    [PROTO_E_EXEC] = "exec",         [PROTO_E_LIMIT] = "limit",       [PROTO_E_TICKET] = "ticket",
    [PROTO_E_SHUTDOWN] = "shutdown", [PROTO_E_INTERNAL] = "internal",
};

static bool
is_type(enum proto_type t)
{
	return (unsigned)t < PROTO_TYPE_MAX && types[t].name;
}

const char *
proto_type_name(enum proto_type t)
{
	return is_type(t) ? types[t].name : "?";
}

const char *
proto_error_name(enum proto_error e)
{
	return (unsigned)e < PROTO_E_MAX && error_names[e] ? error_names[e] : "?";
}

static uint64_t
int_load(const struct field *f, const void *base)
{
	switch (f->kind) {
	case K_U64:
		return CSLOT(uint64_t, base, f->off);
	case K_U16:
		return CSLOT(uint16_t, base, f->off);
	case K_BOOL:
		return CSLOT(bool, base, f->off);
	case K_INT: /* a negative int becomes larger than any bound, which refuses it */
		return (uint64_t)(int64_t)CSLOT(int, base, f->off);
	default:
		return 0;
	}
}

static void
int_store(const struct field *f, void *base, uint64_t v)
{
	switch (f->kind) {
	case K_U64:
		SLOT(uint64_t, base, f->off) = v;
		break;
	case K_U16:
		SLOT(uint16_t, base, f->off) = (uint16_t)v;
		break;
	case K_BOOL:
		SLOT(bool, base, f->off) = v;
		break;
	case K_INT:
		SLOT(int, base, f->off) = (int)v;
		break;
	default:
		break;
	}
}

/* Why string s of n bytes cannot be a value of a field with these flags, or NULL. */
static const char *
str_refused(unsigned flags, const char *s, size_t n)
{
	if (memchr(s, '\0', n))
		return "contains a NUL byte";
	if ((flags & F_ABSOLUTE) && (n == 0 || s[0] != '/'))
		return "not an absolute path";
	if ((flags & F_ASSIGN) && !memchr(s, '=', n))
		return "not of the form NAME=VALUE";
	return NULL;
}

/* ---- scanning: bound what msgpack-c will allocate ---- */

static uint64_t
be_load(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

enum fmt_kind { FMT_BAD, FMT_FIXED, FMT_BYTES, FMT_ARRAY, FMT_MAP };

/*
 * The msgpack formats 0xc0..0xdf: a length field of lenbytes, then fixed more
 * bytes. In order: nil, (never used), false, true, bin 8/16/32, ext 8/16/32,
 * float 32/64, uint 8..64, int 8..64, fixext 1..16, str 8/16/32, array 16/32,
 * map 16/32. An ext's fixed byte is its type; a fixext's are its type and data.
 */
struct fmt {
	uint8_t kind, lenbytes, fixed;
};

static const struct fmt formats[32] = {
    [0x00] = {FMT_FIXED, 0, 0},  [0x01] = {FMT_BAD, 0, 0},   [0x02] = {FMT_FIXED, 0, 0},
    [0x03] = {FMT_FIXED, 0, 0},  [0x04] = {FMT_BYTES, 1, 0}, [0x05] = {FMT_BYTES, 2, 0},
    [0x06] = {FMT_BYTES, 4, 0},  [0x07] = {FMT_BYTES, 1, 1}, [0x08] = {FMT_BYTES, 2, 1},
    [0x09] = {FMT_BYTES, 4, 1},  [0x0a] = {FMT_FIXED, 0, 4}, [0x0b] = {FMT_FIXED, 0, 8},
    [0x0c] = {FMT_FIXED, 0, 1},  [0x0d] = {FMT_FIXED, 0, 2}, [0x0e] = {FMT_FIXED, 0, 4},
    [0x0f] = {FMT_FIXED, 0, 8},  [0x10] = {FMT_FIXED, 0, 1}, [0x11] = {FMT_FIXED, 0, 2},
    [0x12] = {FMT_FIXED, 0, 4},  [0x13] = {FMT_FIXED, 0, 8}, [0x14] = {FMT_FIXED, 0, 2},
    [0x15] = {FMT_FIXED, 0, 3},  [0x16] = {FMT_FIXED, 0, 5}, [0x17] = {FMT_FIXED, 0, 9},
    [0x18] = {FMT_FIXED, 0, 17}, [0x19] = {FMT_BYTES, 1, 0}, [0x1a] = {FMT_BYTES, 2, 0},
    [0x1b] = {FMT_BYTES, 4, 0},  [0x1c] = {FMT_ARRAY, 2, 0}, [0x1d] = {FMT_ARRAY, 4, 0},
    [0x1e] = {FMT_MAP, 2, 0},    [0x1f] = {FMT_MAP, 4, 0},
};

struct item {
	uint64_t size;   /* header and payload */
	uint64_t values; /* the values an array or a map holds (a map's keys too) */
};

/* Reads the item at p (n >= 1 bytes); false when its first byte is no msgpack format. */
static bool
read_item(const uint8_t *p, size_t n, struct item *it)
{
	uint8_t b = p[0];
	struct fmt f = {FMT_FIXED, 0, 0}; /* positive and negative fixint */
	uint64_t len;

	if (b >= 0x80 && b < 0x90)
		f = (struct fmt){FMT_MAP, 0, 0};
	else if (b >= 0x90 && b < 0xa0)
		f = (struct fmt){FMT_ARRAY, 0, 0};
	else if (b >= 0xa0 && b < 0xc0)
		f = (struct fmt){FMT_BYTES, 0, 0};
	else if (b >= 0xc0 && b < 0xe0)
		f = formats[b - 0xc0];
	if (f.kind == FMT_BAD)
		return false;
	if (1u + f.lenbytes > n) {
		*it = (struct item){.size = UINT64_MAX}; /* truncated */
		return true;
	}
	/* The fix formats carry their length in the type byte. */
	len = f.lenbytes ? be_load(p + 1, f.lenbytes) : b & (b < 0xa0 ? 0x0f : 0x1f);
	it->size = 1u + f.lenbytes + f.fixed + (f.kind == FMT_BYTES ? len : 0);
	it->values = f.kind == FMT_MAP ? 2 * len : f.kind == FMT_ARRAY ? len : 0;
	return true;
}

/* ---- decoding ---- */

struct arena {
	char *p; /* NULL while measuring */
	size_t used, cap;
};

struct ctx {
	struct arena a;
	char *err;
	size_t errsize;
	char where[64]; /* the value being decoded: "exec.argv[3]" */
};

static int _printf_(2, 3) fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!c->err || !c->errsize)
		return -EBADMSG;
	n = snprintf(c->err, c->errsize, "%s: ", c->where);
	if (n < 0 || (size_t)n >= c->errsize)
		return -EBADMSG;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errsize - n, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

static int
nomem(struct ctx *c)
{
	fail(c, "out of memory");
	return -ENOMEM;
}

static size_t _printf_(2, 3) path_push(struct ctx *c, const char *fmt, ...)
{
	size_t mark = strlen(c->where);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->where + mark, sizeof(c->where) - mark, fmt, ap);
	va_end(ap);
	return mark;
}

static void
path_pop(struct ctx *c, size_t mark)
{
	c->where[mark] = '\0';
}

/* s as a short printable literal for an error message. */
static const char *
quote(char *buf, size_t size, const char *s, size_t n)
{
	size_t i, j = 0;

	for (i = 0; i < n && j + 8 < size; i++) {
		unsigned char ch = s[i];
		bool plain = ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\';
		j += snprintf(buf + j, size - j, plain ? "%c" : "\\x%02x", ch);
	}
	snprintf(buf + j, size - j, "%s", i < n ? "..." : "");
	return buf;
}

static int
scan(struct ctx *c, const uint8_t *p, size_t n)
{
	uint64_t left[DEPTH_MAX + 1] = {1}; /* values still to read in each open container */
	uint64_t pending = 1;               /* all of them: each needs a byte at least */
	size_t depth = 0, pos = 0, values = 0;
	struct item it;

	for (;;) {
		while (left[depth] == 0 && depth > 0)
			depth--;
		if (left[depth] == 0)
			break;
		if (pos == n)
			return fail(c, "truncated");
		if (!read_item(p + pos, n - pos, &it))
			return fail(c, "invalid byte 0x%02x at offset %zu", p[pos], pos);
		if (it.size > n - pos)
			return fail(c, "truncated");
		if (++values > VALUES_MAX)
			return fail(c, "more than %u values", VALUES_MAX);
		pos += it.size;
		left[depth]--;
		pending--;
		if (pending + it.values > n - pos)
			return fail(c, "truncated");
		if (!it.values)
			continue;
		if (depth == DEPTH_MAX)
			return fail(c, "nested too deeply");
		left[++depth] = it.values;
		pending += it.values;
	}
	if (pos != n)
		return fail(c, "%zu trailing bytes after the map", n - pos);
	return 0;
}

static void *
arena_alloc(struct arena *a, size_t size, size_t align)
{
	size_t off = (a->used + align - 1) & ~(align - 1);

	a->used = off + size;
	/* The filling pass asks for exactly what the measuring pass summed. */
	return a->p && a->used <= a->cap ? a->p + off : NULL;
}

static const char *
arena_str(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1, 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static const char *
what(const msgpack_object *o)
{
	static const char *const names[] = {
	    [MSGPACK_OBJECT_NIL] = "nil",
	    [MSGPACK_OBJECT_BOOLEAN] = "a boolean",
	    [MSGPACK_OBJECT_POSITIVE_INTEGER] = "an unsigned integer",
	    [MSGPACK_OBJECT_NEGATIVE_INTEGER] = "a negative integer",
	    [MSGPACK_OBJECT_FLOAT32] = "a float",
	    [MSGPACK_OBJECT_FLOAT64] = "a float",
	    [MSGPACK_OBJECT_STR] = "a string",
	    [MSGPACK_OBJECT_ARRAY] = "an array",
	    [MSGPACK_OBJECT_MAP] = "a map",
	    [MSGPACK_OBJECT_BIN] = "binary data",
	    [MSGPACK_OBJECT_EXT] = "an extension",
	};

	return (unsigned)o->type < ARRAY_SIZE(names) && names[o->type] ? names[o->type] : "?";
}

static int
get_str(struct ctx *c, const msgpack_object *o, unsigned flags, uint64_t max, const char **s,
        size_t *n)
{
	const char *why;

	if (o->type == MSGPACK_OBJECT_STR)
		*s = o->via.str.ptr, *n = o->via.str.size;
	else if (o->type == MSGPACK_OBJECT_BIN)
		*s = o->via.bin.ptr, *n = o->via.bin.size;
	else
		return fail(c, "expected a string, got %s", what(o));
	if (*n > max)
		return fail(c, "longer than %" PRIu64 " bytes", max);
	why = str_refused(flags, *s, *n);
	return why ? fail(c, "%s", why) : 0;
}

static int
get_array(struct ctx *c, const struct field *f, const msgpack_object *o)
{
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return fail(c, "expected an array, got %s", what(o));
	if (o->via.array.size < f->min || o->via.array.size > f->max)
		return fail(c, "%" PRIu32 " entries, expected %" PRIu64 "..%" PRIu64,
		            o->via.array.size, f->min, f->max);
	return 0;
}

typedef int decode_fn(struct ctx *c, const struct field *f, const msgpack_object *o, void *base);

static int decode_map(struct ctx *c, const struct field *fields, size_t n, const msgpack_object *o,
                      void *base);

/* "t" was read first, by read_type(). */
static int
decode_type(struct ctx *c, const struct field *f, const msgpack_object *o, void *base)
{
	return 0;
}

static int
decode_int(struct ctx *c, const struct field *f, const msgpack_object *o, void *base)
{
	uint64_t v;

	if (f->kind == K_BOOL && o->type == MSGPACK_OBJECT_BOOLEAN)
		v = o->via.boolean;
	else if (f->kind != K_BOOL && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		v = o->via.u64;
	else
		return fail(c, "expected %s, got %s",
		            f->kind == K_BOOL ? "a boolean" : "an unsigned integer", what(o));
	if (f->kind == K_BOOL && v < f->min)
		return fail(c, "must be true");
	if (v < f->min || v > f->max)
		return fail(c, "%" PRIu64 " is out of range %" PRIu64 "..%" PRIu64, v, f->min,
		            f->max);
	int_store(f, base, v);
	if (f->flags & F_HAS)
		SLOT(bool, base, f->count) = true;
	return 0;
}

static int
decode_str(struct ctx *c, const struct field *f, const msgpack_object *o, void *base)
{
	const char *s = NULL;
	size_t n = 0;
	int r = get_str(c, o, f->flags, f->max, &s, &n);

	if (r < 0)
		return r;
	SLOT(const char *, base, f->off) = arena_str(&c->a, s, n);
	return 0;
}

static int
decode_strv(struct ctx *c, const struct field *f, const msgpack_object *o, void *base)
{
	int r = get_array(c, f, o);
	size_t n;
	const char **v;

	if (r < 0)
		return r;
	n = o->via.array.size;
	v = arena_alloc(&c->a, (n + 1) * sizeof(*v), alignof(char *));
	for (size_t i = 0; i < n; i++) {
		size_t mark = path_push(c, "[%zu]", i), len = 0;
		const char *s = NULL;

		r = get_str(c, &o->via.array.ptr[i], f->flags, STR_ANY, &s, &len);
		if (r < 0)
			return r;
		s = arena_str(&c->a, s, len);
		if (v)
			v[i] = s;
		path_pop(c, mark);
	}
	if (v)
		v[n] = NULL;
	SLOT(const char *const *, base, f->off) = v;
	SLOT(size_t, base, f->count) = n;
	return 0;
}

static int
decode_bin(struct ctx *c, const struct field *f, const msgpack_object *o, void *base)
{
	if (o->type != MSGPACK_OBJECT_BIN)
		return fail(c, "expected binary data, got %s", what(o));
	if (o->via.bin.size > f->max)
		return fail(c, "longer than %" PRIu64 " bytes", f->max);
	SLOT(const uint8_t *, base, f->off) = (const uint8_t *)o->via.bin.ptr;
	SLOT(size_t, base, f->count) = o->via.bin.size;
	return 0;
}

static int
decode_tasks(struct ctx *c, const struct field *f, const msgpack_object *o, void *base)
{
	int r = get_array(c, f, o);
	struct proto_task_info scratch; /* what the measuring pass decodes into */
	struct proto_task_info *t;
	size_t n;

	if (r < 0)
		return r;
	n = o->via.array.size;
	t = arena_alloc(&c->a, n * sizeof(*t), alignof(struct proto_task_info));
	for (size_t i = 0; i < n; i++) {
		size_t mark = path_push(c, "[%zu]", i);

		r = decode_map(c, task_fields, ARRAY_SIZE(task_fields), &o->via.array.ptr[i],
		               t ? &t[i] : &scratch);
		if (r < 0)
			return r;
		path_pop(c, mark);
	}
	SLOT(const struct proto_task_info *, base, f->off) = t;
	SLOT(size_t, base, f->count) = n;
	return 0;
}

static decode_fn *const decoders[K_MAX] = {
    [K_TYPE] = decode_type, [K_U64] = decode_int,  [K_U16] = decode_int,
    [K_INT] = decode_int,   [K_BOOL] = decode_int, [K_STR] = decode_str,
    [K_STRV] = decode_strv, [K_BIN] = decode_bin,  [K_TASKS] = decode_tasks,
};

static const struct field *
find_field(const struct field *fields, size_t n, const msgpack_object_str *key)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(fields[i].name) == key->size &&
		    !memcmp(fields[i].name, key->ptr, key->size))
			return &fields[i];
	return NULL;
}

static int
decode_map(struct ctx *c, const struct field *fields, size_t n, const msgpack_object *o, void *base)
{
	uint32_t seen = 0;
	char q[64];

	if (o->type != MSGPACK_OBJECT_MAP)
		return fail(c, "expected a map, got %s", what(o));
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];
		const struct field *f;
		size_t mark;
		int r;

		if (kv->key.type != MSGPACK_OBJECT_STR)
			return fail(c, "expected a string key, got %s", what(&kv->key));
		f = find_field(fields, n, &kv->key.via.str);
		if (!f)
			return fail(c, "unknown key \"%s\"",
			            quote(q, sizeof(q), kv->key.via.str.ptr, kv->key.via.str.size));
		mark = path_push(c, ".%s", f->name);
		if (seen & (1u << (f - fields)))
			return fail(c, "repeated key");
		seen |= 1u << (f - fields);
		r = decoders[f->kind](c, f, &kv->val, base);
		if (r < 0)
			return r;
		path_pop(c, mark);
	}
	for (size_t i = 0; i < n; i++)
		if ((fields[i].flags & F_REQUIRED) && !(seen & (1u << i))) {
			path_push(c, ".%s", fields[i].name);
			return fail(c, "missing");
		}
	return 0;
}

static int
read_type(struct ctx *c, const msgpack_object *o, enum proto_type *ret)
{
	const char *s = NULL;
	size_t n = 0;
	char q[64];
	int r;

	if (o->type != MSGPACK_OBJECT_MAP)
		return fail(c, "expected a map, got %s", what(o));
	path_push(c, ".t");
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];

		if (kv->key.type != MSGPACK_OBJECT_STR || kv->key.via.str.size != 1 ||
		    kv->key.via.str.ptr[0] != 't')
			continue;
		r = get_str(c, &kv->val, 0, STR_ANY, &s, &n);
		if (r < 0)
			return r;
		for (int t = 1; t < PROTO_TYPE_MAX; t++)
			if (strlen(types[t].name) == n && !memcmp(types[t].name, s, n)) {
				*ret = (enum proto_type)t;
				return 0;
			}
		return fail(c, "unknown type \"%s\"", quote(q, sizeof(q), s, n));
	}
	return fail(c, "missing");
}

/* The second pass over a frame that passed the first: it cannot fail but for memory. */
static int
fill(struct ctx *c, const struct type_spec *t, const msgpack_object *o, struct proto_msg *m)
{
	c->a = (struct arena){.p = malloc(c->a.used), .cap = c->a.used};
	if (!c->a.p)
		return nomem(c);
	return decode_map(c, t->fields, t->n, o, m);
}

static int
decode_frame(struct ctx *c, const msgpack_object *o, struct proto_msg *ret)
{
	struct proto_msg m = {0};
	const struct type_spec *t;
	const char *why;
	int r = read_type(c, o, &m.type);

	if (r < 0)
		return r;
	t = &types[m.type];
	snprintf(c->where, sizeof(c->where), "%s", t->name);
	r = decode_map(c, t->fields, t->n, o, &m); /* checks and measures */
	if (r == 0 && c->a.used)
		r = fill(c, t, o, &m);
	if (r == 0 && t->check && (why = t->check(&m)))
		r = fail(c, "%s", why);
	if (r < 0) {
		free(c->a.p);
		return r;
	}
	m.arena = c->a.p;
	*ret = m;
	return 0;
}

int
proto_decode(const uint8_t *body, size_t len, struct proto_msg *msg, char *err, size_t errsize)
{
	struct ctx c = {.err = err, .errsize = errsize, .where = "frame"};
	msgpack_unpack_return u;
	msgpack_unpacked obj;
	size_t off = 0;
	int r = scan(&c, body, len);

	if (r < 0)
		return r;
	msgpack_unpacked_init(&obj);
	u = msgpack_unpack_next(&obj, (const char *)body, len, &off);
	if (u == MSGPACK_UNPACK_NOMEM_ERROR)
		r = nomem(&c);
	else if (u != MSGPACK_UNPACK_SUCCESS || off != len)
		r = fail(&c, "not valid msgpack"); /* scan() let it through: msgpack-c disagrees */
	else
		r = decode_frame(&c, &obj.data, msg);
	msgpack_unpacked_destroy(&obj);
	return r;
}

void
proto_msg_free(struct proto_msg *msg)
{
	if (!msg)
		return;
	free(msg->arena);
	*msg = (struct proto_msg){0};
}

int
proto_frame_length(const uint8_t header[PROTO_HEADER_SIZE], uint32_t *ret)
{
	uint64_t n = be_load(header, PROTO_HEADER_SIZE);

	if (n == 0 || n > PROTO_FRAME_MAX)
		return -EMSGSIZE;
	*ret = (uint32_t)n;
	return 0;
}

/* ---- encoding ---- */

struct enc {
	struct proto_buf *b;
	size_t start; /* where the frame's header goes */
	msgpack_packer pk;
	int err;          /* the first write's failure: -ENOMEM, or -EINVAL past the frame limit */
	bool header_only; /* proto_data_header(): the caller sends the payload itself */
	bool fixed;       /* b->p is the caller's array, large enough: never reallocated */
};

void
proto_buf_free(struct proto_buf *b)
{
	if (!b)
		return;
	free(b->p);
	*b = (struct proto_buf){0};
}

static int
buf_grow(struct proto_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	uint8_t *p;

	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

/*
 * The packer's output. The pack functions' results are not checked: the first
 * failure is kept in e->err and every later write refused, and encode_frame()
 * looks at e->err at the end.
 */
static int
enc_write(void *data, const char *p, size_t n)
{
	struct enc *e = data;
	struct proto_buf *b = e->b;

	if (e->err)
		return -1;
	if (n > PROTO_HEADER_SIZE + PROTO_FRAME_MAX - (b->len - e->start))
		e->err = -EINVAL;
	else if (n > b->cap - b->len && (e->fixed || buf_grow(b, n) < 0))
		e->err = -ENOMEM;
	if (e->err)
		return -1;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

static void
pack_str(struct enc *e, const char *s, size_t n)
{
	msgpack_pack_str(&e->pk, n);
	msgpack_pack_str_body(&e->pk, s, n);
}

typedef int encode_fn(struct enc *e, const struct field *f, const void *base);

static int encode_map(struct enc *e, const struct field *fields, size_t n, const void *base);

static int
encode_type(struct enc *e, const struct field *f, const void *base)
{
	const char *name = types[((const struct proto_msg *)base)->type].name;

	pack_str(e, name, strlen(name));
	return 0;
}

static int
encode_int(struct enc *e, const struct field *f, const void *base)
{
	uint64_t v = int_load(f, base);

	if (v < f->min || v > f->max)
		return -EINVAL;
	if (f->kind == K_BOOL && v)
		msgpack_pack_true(&e->pk);
	else if (f->kind == K_BOOL)
		msgpack_pack_false(&e->pk);
	else
		msgpack_pack_uint64(&e->pk, v);
	return 0;
}

static int
encode_str(struct enc *e, const struct field *f, const void *base)
{
	const char *s = CSLOT(const char *, base, f->off);
	size_t n = s ? strlen(s) : 0;

	if (!s || n > f->max || str_refused(f->flags, s, n))
		return -EINVAL;
	pack_str(e, s, n);
	return 0;
}

static int
encode_strv(struct enc *e, const struct field *f, const void *base)
{
	const char *const *v = CSLOT(const char *const *, base, f->off);
	size_t n = CSLOT(size_t, base, f->count);

	if (n < f->min || n > f->max || (n && !v))
		return -EINVAL;
	msgpack_pack_array(&e->pk, n);
	for (size_t i = 0; i < n; i++) {
		size_t len = v[i] ? strlen(v[i]) : 0;

		if (!v[i] || str_refused(f->flags, v[i], len))
			return -EINVAL;
		pack_str(e, v[i], len);
	}
	return 0;
}

static int
encode_bin(struct enc *e, const struct field *f, const void *base)
{
	const uint8_t *p = CSLOT(const uint8_t *, base, f->off);
	size_t n = CSLOT(size_t, base, f->count);

	if (n > f->max || (n && !p && !e->header_only))
		return -EINVAL;
	msgpack_pack_bin(&e->pk, n);
	if (!e->header_only)
		msgpack_pack_bin_body(&e->pk, p, n);
	return 0;
}

static int
encode_tasks(struct enc *e, const struct field *f, const void *base)
{
	const struct proto_task_info *t = CSLOT(const struct proto_task_info *, base, f->off);
	size_t n = CSLOT(size_t, base, f->count);
	int r = 0;

	if (n > f->max || (n && !t))
		return -EINVAL;
	msgpack_pack_array(&e->pk, n);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = encode_map(e, task_fields, ARRAY_SIZE(task_fields), &t[i]);
	return r;
}

static encode_fn *const encoders[K_MAX] = {
    [K_TYPE] = encode_type, [K_U64] = encode_int,  [K_U16] = encode_int,
    [K_INT] = encode_int,   [K_BOOL] = encode_int, [K_STR] = encode_str,
    [K_STRV] = encode_strv, [K_BIN] = encode_bin,  [K_TASKS] = encode_tasks,
};

/* Optional fields are absent when zero: a NULL string, id 0, all false, errno 0. */
static bool
present(const struct field *f, const void *base)
{
	if (f->flags & F_REQUIRED)
		return true;
	if (f->kind == K_STR)
		return CSLOT(const char *, base, f->off) != NULL;
	if (f->flags & F_HAS)
		return CSLOT(bool, base, f->count);
	return int_load(f, base) != 0;
}

static int
encode_map(struct enc *e, const struct field *fields, size_t n, const void *base)
{
	size_t count = 0;
	int r;

	for (size_t i = 0; i < n; i++)
		count += present(&fields[i], base);
	msgpack_pack_map(&e->pk, count);
	for (size_t i = 0; i < n; i++) {
		if (!present(&fields[i], base))
			continue;
		pack_str(e, fields[i].name, strlen(fields[i].name));
		r = encoders[fields[i].kind](e, &fields[i], base);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Appends a frame; payload counts the bytes of a data frame the caller sends itself. */
static int
encode_frame(struct enc *e, const struct proto_msg *msg, size_t payload)
{
	static const char placeholder[PROTO_HEADER_SIZE];
	const struct type_spec *t;
	size_t body;
	int r;

	if (!is_type(msg->type))
		return -EINVAL;
	t = &types[msg->type];
	if (t->check && t->check(msg))
		return -EINVAL;
	msgpack_packer_init(&e->pk, e, enc_write);
	enc_write(e, placeholder, sizeof(placeholder));
	r = encode_map(e, t->fields, t->n, msg);
	if (r == 0)
		r = e->err;
	body = e->b->len - e->start - PROTO_HEADER_SIZE + payload;
	if (r == 0 && body > PROTO_FRAME_MAX)
		r = -EINVAL;
	if (r < 0) {
		e->b->len = e->start;
		return r;
	}
	for (size_t i = 0; i < PROTO_HEADER_SIZE; i++)
		e->b->p[e->start + i] = (uint8_t)(body >> 8 * (PROTO_HEADER_SIZE - 1 - i));
	return 0;
}

int
proto_encode(struct proto_buf *b, const struct proto_msg *msg)
{
	struct enc e = {.b = b, .start = b->len};

	return encode_frame(&e, msg, 0);
}

int
proto_data_header(enum proto_type type, size_t len, uint8_t out[PROTO_DATA_HEADER_MAX])
{
	/* At most 4 + 1 + 2 + 7 + 5 + 5 bytes: out never needs to grow. */
	struct proto_buf b = {.p = out, .cap = PROTO_DATA_HEADER_MAX};
	struct enc e = {.b = &b, .header_only = true, .fixed = true};
	struct proto_msg m = {.type = type, .u.data.len = len};
	int r;

	if (type != PROTO_STDIN && type != PROTO_STDOUT && type != PROTO_STDERR)
		return -EINVAL;
	r = encode_frame(&e, &m, len);
	return r < 0 ? r : (int)b.len;
}

#ifndef PIPEFS_MAGIC
#define PIPEFS_MAGIC 0x50495045
#endif

bool
proto_stdio_pipe(int fd, int n)
{
	struct stat st;
	struct statfs fs;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || (fl & O_PATH) || fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode) ||
	    fstatfs(fd, &fs) < 0 || fs.f_type != PIPEFS_MAGIC)
		return false;
	int acc = fl & O_ACCMODE;
	return acc == O_RDWR || acc == (n == 0 ? O_RDONLY : O_WRONLY);
}
