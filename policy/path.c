/* SPDX-License-Identifier: MIT */
/* Lexical path helpers: expansion of ~ and $NAME, normalisation, splitting. */
#include <ctype.h>
#include <string.h>

#include "policy-private.h"

const char *
env_lookup(char *const *envp, const char *name, size_t len)
{
	if (!envp)
		return NULL;
	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

static bool
is_name_start(char c)
{
	return c == '_' || isalpha((unsigned char)c);
}

static bool
is_name_char(char c)
{
	return c == '_' || isalnum((unsigned char)c);
}

/* Appends n bytes to out at *pos; false when it does not fit. */
static bool
append(char *out, size_t size, size_t *pos, const char *s, size_t n)
{
	if (*pos + n >= size)
		return false;
	memcpy(out + *pos, s, n);
	*pos += n;
	out[*pos] = '\0';
	return true;
}

/* Reads the variable name at in[*i] ("$NAME" or "${NAME}"); *i ends past it. */
static int
read_var(const char *in, size_t *i, const char **name, size_t *len, const char **err)
{
	size_t j = *i + 1;

	if (in[j] == '{') {
		size_t start = ++j;
		while (in[j] && in[j] != '}')
			j++;
		if (!in[j]) {
			*err = "unterminated \"${\"";
			return -EINVAL;
		}
		if (j == start) {
			*err = "empty variable name \"${}\"";
			return -EINVAL;
		}
		for (size_t k = start; k < j; k++)
			if (!(k == start ? is_name_start(in[k]) : is_name_char(in[k]))) {
				*err = "invalid variable name in \"${…}\"";
				return -EINVAL;
			}
		*name = in + start;
		*len = j - start;
		*i = j + 1;
		return 0;
	}
	if (!is_name_start(in[j])) {
		*err = "\"$\" must be followed by a name or \"{NAME}\"";
		return -EINVAL;
	}
	*name = in + j;
	while (is_name_char(in[j]))
		j++;
	*len = (size_t)(in + j - *name);
	*i = j;
	return 0;
}

int
policy_path_expand(const char *in, char *const *envp, char *out, size_t size, char *ret_unset,
                   size_t unset_size, const char **err)
{
	size_t pos = 0, i = 0;

	*err = NULL;
	if (size == 0)
		return -ENAMETOOLONG;
	out[0] = '\0';
	if (in[0] == '~') {
		if (in[1] != '\0' && in[1] != '/') {
			*err = "\"~user\" is not supported; write the path out";
			return -EINVAL;
		}
		const char *home = env_lookup(envp, "HOME", 4);
		if (!home || !*home) {
			if (ret_unset)
				snprintf(ret_unset, unset_size, "HOME");
			return 0;
		}
		if (!append(out, size, &pos, home, strlen(home)))
			return -ENAMETOOLONG;
		i = 1;
	}
	/* The whole entry is parsed even once a variable is unset, so that whether a policy
	 * loads never depends on the environment. */
	bool dropped = false;
	while (in[i]) {
		if (in[i] != '$') {
			if (!dropped && !append(out, size, &pos, in + i, 1))
				return -ENAMETOOLONG;
			i++;
			continue;
		}
		const char *name;
		size_t len;
		int r = read_var(in, &i, &name, &len, err);
		if (r < 0)
			return r;
		if (dropped)
			continue;
		const char *v = env_lookup(envp, name, len);
		if (!v || !*v) {
			if (ret_unset)
				snprintf(ret_unset, unset_size, "%.*s", (int)len, name);
			dropped = true;
			continue;
		}
		if (!append(out, size, &pos, v, strlen(v)))
			return -ENAMETOOLONG;
	}
	if (dropped) {
		out[0] = '\0';
		return 0;
	}
	if (pos == 0) {
		*err = "empty path";
		return -EINVAL;
	}
	return (int)pos;
}

int
policy_path_normalize(const char *base, const char *path, char *out, size_t size)
{
	size_t pos = 0;

	if (!path || !*path)
		return -EINVAL;
	if (size < 2)
		return -ENAMETOOLONG;
	if (path[0] != '/') {
		if (!base || base[0] != '/')
			return -EINVAL;
		int r = policy_path_normalize(NULL, base, out, size);
		if (r < 0)
			return r;
		pos = (size_t)r;
	} else {
		out[0] = '/';
		out[1] = '\0';
		pos = 1;
	}

	const char *s = path;
	while (*s) {
		while (*s == '/')
			s++;
		const char *e = s;
		while (*e && *e != '/')
			e++;
		size_t n = (size_t)(e - s);
		if (n == 0 || (n == 1 && s[0] == '.')) {
			/* nothing */
		} else if (n == 2 && s[0] == '.' && s[1] == '.') {
			while (pos > 1 && out[pos - 1] != '/')
				pos--;
			if (pos > 1)
				pos--;
			out[pos] = '\0';
		} else {
			if (pos > 1 && !append(out, size, &pos, "/", 1))
				return -ENAMETOOLONG;
			if (!append(out, size, &pos, s, n))
				return -ENAMETOOLONG;
		}
		s = e;
	}
	return (int)pos;
}

int
path_split(const char *path, size_t len, struct comp *c, size_t max)
{
	size_t n = 0, i = 1;

	if (len == 0 || path[0] != '/' || len > POLICY_PATH_MAX)
		return -1;
	if (len == 1)
		return 0;
	while (i <= len) {
		size_t s = i;
		while (i < len && path[i] != '/')
			i++;
		size_t l = i - s;
		if (l == 0 || (l == 1 && path[s] == '.') ||
		    (l == 2 && path[s] == '.' && path[s + 1] == '.'))
			return -1;
		if (n == max)
			return -1;
		c[n].off = (uint16_t)s;
		c[n].len = (uint16_t)l;
		n++;
		i++;
	}
	return (int)n;
}
