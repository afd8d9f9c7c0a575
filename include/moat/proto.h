/* SPDX-License-Identifier: MIT */
/*
 * The runner protocol, version 1: what a client (moat-runner exec, moat-shim,
 * moat run) and the runner say to each other over a unix stream socket.
 *
 * Wire format. A frame is a 4-byte big-endian length N (1 <= N <= PROTO_FRAME_MAX)
 * followed by N bytes holding exactly one msgpack map. Key "t" names the frame
 * type as a string ("hello", "exec", ...); the other keys are the type's fields
 * below. Keys are msgpack str; strings are str or bin and must not hold a NUL
 * byte; integers are non-negative unless said otherwise. A frame with a missing
 * required field, a field of the wrong type or out of bounds, an unknown or
 * repeated key, or bytes after the map is malformed: the receiver answers
 * `error` and closes the connection.
 *
 * Conversation. client: hello, then either
 *   exec, then any of stdin, eof, signal, resize        runner: started, then
 *   (after a hello with a ticket: no exec)
 *                                                       stdout/stderr..., exit
 *   ps                                                  runner: tasks
 *   kill                                                runner: killed
 * The runner may send `error` at any point and then closes. Frames out of this
 * order are malformed.
 *
 *   hello   {version: uint (== PROTO_VERSION), ticket?: str <= PROTO_TICKET_MAX,
 *            fds?: uint 0..7, closed?: uint 0..7}
 *           (a ticket stands for an exec the supervisor captured: the runner starts
 *           it at once, and the client sends no exec frame. fds: bit N set, the
 *           client's own stdin/stdout/stderr (N = 0/1/2) is a pipe, sent with the
 *           hello's first byte (SCM_RIGHTS, in that order), for the command to use
 *           as it is: nothing of that stream crosses the connection. Pipes only;
 *           not with tty. closed: bit N set, the client's stdio N is closed, and
 *           so is the command's)
 *   exec    {argv: [str] (1..PROTO_ARGS_MAX), env: [str "K=V"] (0..PROTO_ARGS_MAX),
 *            cwd: str (absolute, < PATH_MAX), tty: bool, rows: uint16, cols: uint16,
 *            path?: str (the file to execute; default argv[0] looked up on env's PATH),
 *            session?: str <= PROTO_NAME_MAX (what `moat-runner kill SESSION` names),
 *            umask?: uint 0..0777 (default 022),
 *            sigign?: uint (bit N-1 set: signal N starts ignored, as across an exec)}
 *   started {id: uint (task id), pid: uint (the command's pid, as the runner sees it)}
 *   stdin | stdout | stderr   {data: bin <= PROTO_CHUNK_MAX (may be empty)}
 *   signal  {signal: uint 1..64}
 *   resize  {rows: uint16, cols: uint16}
 *   eof     {}
 *   exit    {code: uint 0..255, signal: uint 0..64}   (signal != 0: killed by it)
 *   error   {code: uint (enum proto_error), message: str <= PROTO_MESSAGE_MAX,
 *            errno?: uint}
 *   ps      {}
 *   tasks   {tasks: [{id: uint, session: str, uid: uint, pid: uint,
 *                     started: uint (unix time), command: str <= PROTO_MESSAGE_MAX}]
 *            (0..PROTO_TASKS_MAX)}
 *   kill    {session?: str, id?: uint, all?: bool}   (exactly one of the three)
 *   killed  {count: uint}
 */
#ifndef MOAT_PROTO_H
#define MOAT_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_VERSION     1
#define PROTO_HEADER_SIZE 4
#define PROTO_FRAME_MAX   (4u << 20) /* argv + env of one exec: the kernel allows 2 MiB+ */
#define PROTO_CHUNK_MAX   (64u << 10)
#define PROTO_ARGS_MAX    65536u
#define PROTO_TICKET_MAX  128u
#define PROTO_NAME_MAX    128u
#define PROTO_MESSAGE_MAX 4096u
#define PROTO_TASKS_MAX   4096u
#define PROTO_PATH_MAX    4096u /* PATH_MAX, counting the NUL */

enum proto_type {
	PROTO_HELLO = 1,
	PROTO_EXEC,
	PROTO_STARTED,
	PROTO_STDIN,
	PROTO_STDOUT,
	PROTO_STDERR,
	PROTO_SIGNAL,
	PROTO_RESIZE,
	PROTO_EOF,
	PROTO_EXIT,
	PROTO_ERROR,
	PROTO_PS,
	PROTO_TASKS,
	PROTO_KILL,
	PROTO_KILLED,
	PROTO_TYPE_MAX,
};

enum proto_error {
	PROTO_E_PROTOCOL = 1, /* malformed, oversized or out-of-order frame */
	PROTO_E_VERSION,      /* hello.version not spoken here */
	PROTO_E_DENIED,       /* the peer may not use this runner, or the policy refuses */
	PROTO_E_EXEC,         /* the command could not be started (errno says why) */
	PROTO_E_LIMIT,        /* too many tasks or connections */
	PROTO_E_TICKET,       /* unknown, used or expired ticket */
	PROTO_E_SHUTDOWN,     /* the runner is draining */
	PROTO_E_INTERNAL,     /* the runner failed; message says how */
	PROTO_E_MAX,
};

/* A NUL-free string: NUL-terminated copy owned by the message. */
struct proto_task_info {
	uint64_t id, uid, pid, started;
	const char *session, *command;
};

struct proto_msg {
	enum proto_type type;
	union {
		struct {
			uint64_t version;
			const char *ticket; /* NULL when absent */
			uint16_t fds;       /* bit N: stdio descriptor N comes with it */
			uint16_t closed;    /* bit N: stdio descriptor N is closed */
		} hello;
		struct {
			const char *const *argv; /* NULL-terminated */
			size_t argc;
			const char *const *env; /* NULL-terminated */
			size_t envc;
			const char *cwd;
			const char *path;    /* NULL when absent */
			const char *session; /* NULL when absent */
			bool tty;
			uint16_t rows, cols;
			bool has_umask;
			uint16_t umask;
			uint64_t sigign;
		} exec;
		struct {
			uint64_t id, pid;
		} started;
		struct {
			const uint8_t *data; /* points into the decoded frame: no copy */
			size_t len;
		} data; /* stdin, stdout, stderr */
		struct {
			int signal;
		} signal;
		struct {
			uint16_t rows, cols;
		} resize;
		struct {
			int code, signal;
		} exit;
		struct {
			enum proto_error code;
			const char *message;
			int err; /* 0 when absent */
		} error;
		struct {
			const struct proto_task_info *tasks;
			size_t n;
		} tasks;
		struct {
			const char *session; /* at most one of session, id, all is set */
			uint64_t id;         /* 0 when absent (task ids start at 1) */
			bool all;
		} kill;
		struct {
			uint64_t count;
		} killed;
	} u;
	void *arena; /* owns every string and array above except data */
};

/*
 * The length in a frame header. 0, or -EMSGSIZE when it is 0 or larger than
 * PROTO_FRAME_MAX (the connection is then beyond repair).
 */
int proto_frame_length(const uint8_t header[PROTO_HEADER_SIZE], uint32_t *ret);

/*
 * Decodes one frame body (without its header). 0, -ENOMEM, or -EBADMSG with a
 * one-line reason in err ("exec.argv[3]: contains a NUL byte"). On success msg must be
 * released with proto_msg_free(); data frames point into body, which must
 * outlive msg. On failure nothing needs freeing.
 */
int proto_decode(const uint8_t *body, size_t len, struct proto_msg *msg, char *err, size_t errsize);
void proto_msg_free(struct proto_msg *msg);

/* A growable output buffer; encoders append whole frames (header included). */
struct proto_buf {
	uint8_t *p;
	size_t len, cap;
};
void proto_buf_free(struct proto_buf *b);

/*
 * Encoders: 0 or -ENOMEM, -EINVAL (a field out of the bounds above, including a
 * frame that would exceed PROTO_FRAME_MAX). On failure b is as it was.
 */
int proto_encode(struct proto_buf *b, const struct proto_msg *msg);

/*
 * The header of a data frame (stdin, stdout, stderr) carrying len bytes, so a
 * caller can send the payload from its own buffer: writes at most
 * PROTO_DATA_HEADER_MAX bytes to out and returns how many; -EINVAL when
 * len > PROTO_CHUNK_MAX or type is not a data type.
 */
#define PROTO_DATA_HEADER_MAX 32
int proto_data_header(enum proto_type type, size_t len, uint8_t out[PROTO_DATA_HEADER_MAX]);

/*
 * Whether fd may go with a hello as stdio n (0 stdin, 1 stdout, 2 stderr): an
 * anonymous pipe (not a named FIFO, which is a host inode a task could chmod
 * or reopen past its view; not an O_PATH descriptor), open for reading (stdin)
 * or writing (stdout, stderr).
 */
bool proto_stdio_pipe(int fd, int n);

const char *proto_type_name(enum proto_type t);
const char *proto_error_name(enum proto_error e);

#endif
