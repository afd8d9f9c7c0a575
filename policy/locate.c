/* SPDX-License-Identifier: MIT */
/*
 * Where each value of a JSON document starts. jansson parses the policy but keeps
 * no positions, and every error must name a line and a column; so one extra pass
 * over the (already validated) text records "surface.write[2]" -> line:col for
 * every value down to a fixed depth, sorted for binary search. Columns count
 * characters (UTF-8 sequences), as editors do.
 */
#include <string.h>

#include "policy-private.h"

#define LOC_DEPTH_MAX 32

struct loc_entry {
	char *key;
	unsigned line, col;   /* the value */
	unsigned kline, kcol; /* the member name, for object members */
};

struct locator {
	struct loc_entry *v;
	size_t n, cap;
};

struct scan {
	const char *s;
	size_t len, i;
	unsigned line, col;
	struct locator *l;
	char key[LOC_KEY_MAX];
	bool ok;
};

static void
adv(struct scan *sc)
{
	unsigned char c = (unsigned char)sc->s[sc->i++];
	if (c == '\n') {
		sc->line++;
		sc->col = 1;
	} else if ((c & 0xC0) != 0x80) {
		sc->col++;
	}
}

static void
ws(struct scan *sc)
{
	while (sc->i < sc->len && strchr(" \t\r\n", sc->s[sc->i]) && sc->s[sc->i])
		adv(sc);
}

static int
peek(const struct scan *sc)
{
	return sc->i < sc->len ? (unsigned char)sc->s[sc->i] : -1;
}

static void
record(struct scan *sc, unsigned line, unsigned col, unsigned kline, unsigned kcol)
{
	struct locator *l = sc->l;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct loc_entry *v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			sc->ok = false;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	char *k = strdup(sc->key);
	if (!k) {
		sc->ok = false;
		return;
	}
	l->v[l->n++] = (struct loc_entry){k, line, col, kline, kcol};
}

/* Skips a string; copies its raw bytes (escapes undecoded) to out when not NULL. */
static unsigned
hex4(const struct scan *sc, size_t at)
{
	unsigned v = 0;
	for (size_t k = at; k < at + 4; k++) {
		char c = k < sc->len ? sc->s[k] : 0;
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v |= (unsigned)((c | 0x20) - 'a' + 10);
		else
			return UINT32_MAX;
	}
	return v;
}

static void
put_utf8(char *out, size_t size, size_t *o, unsigned cp)
{
	char b[4];
	size_t n;
	if (cp < 0x80) {
		b[0] = (char)cp, n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xC0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xE0 | cp >> 12), b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
	} else {
		b[0] = (char)(0xF0 | cp >> 18), b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), b[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
	}
	for (size_t k = 0; k < n && *o + 1 < size; k++)
		out[(*o)++] = b[k];
}

/*
 * Skips a string; when out is not NULL, writes it decoded as jansson decodes it,
 * so that key paths built here match the ones the loader builds.
 */
static void
string(struct scan *sc, char *out, size_t size)
{
	size_t o = 0;
	adv(sc); /* the opening quote */
	while (sc->i < sc->len && sc->s[sc->i] != '"') {
		char c = sc->s[sc->i];
		if (c != '\\') {
			if (out && o + 1 < size)
				out[o++] = c;
			adv(sc);
			continue;
		}
		adv(sc);
		if (sc->i >= sc->len)
			break;
		c = sc->s[sc->i];
		unsigned cp = (unsigned char)c;
		switch (c) {
		case 'b':
			cp = '\b';
			break;
		case 'f':
			cp = '\f';
			break;
		case 'n':
			cp = '\n';
			break;
		case 'r':
			cp = '\r';
			break;
		case 't':
			cp = '\t';
			break;
		case 'u':
			cp = hex4(sc, sc->i + 1);
			for (int k = 0; k < 4 && sc->i + 1 < sc->len; k++)
				adv(sc);
			/* A high surrogate followed by "\uDC00".."\uDFFF" is one code point. */
			if (cp >= 0xD800 && cp < 0xDC00 && sc->i + 6 < sc->len &&
			    sc->s[sc->i + 1] == '\\' && sc->s[sc->i + 2] == 'u') {
				unsigned lo = hex4(sc, sc->i + 3);
				if (lo >= 0xDC00 && lo < 0xE000) {
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					for (int k = 0; k < 6; k++)
						adv(sc);
				}
			}
			break;
		default:
			break;
		}
		if (out && cp != UINT32_MAX)
			put_utf8(out, size, &o, cp);
		adv(sc);
	}
	if (sc->i < sc->len)
		adv(sc);
	else
		sc->ok = false;
	if (out)
		out[o] = '\0';
}

static void value(struct scan *sc, int depth, unsigned kline, unsigned kcol);

static void
members(struct scan *sc, int depth, bool object)
{
	size_t base = strlen(sc->key);
	unsigned idx = 0;
	int close = object ? '}' : ']';

	adv(sc);
	ws(sc);
	if (peek(sc) == close) {
		adv(sc);
		return;
	}
	while (sc->ok) {
		unsigned kline = 0, kcol = 0;
		ws(sc);
		if (object) {
			char name[LOC_KEY_MAX];
			if (peek(sc) != '"') {
				sc->ok = false;
				return;
			}
			kline = sc->line;
			kcol = sc->col;
			string(sc, name, sizeof(name));
			snprintf(sc->key + base, sizeof(sc->key) - base, "%s%s", base ? "." : "",
			         name);
			ws(sc);
			if (peek(sc) != ':') {
				sc->ok = false;
				return;
			}
			adv(sc);
		} else {
			snprintf(sc->key + base, sizeof(sc->key) - base, "[%u]", idx++);
		}
		ws(sc);
		value(sc, depth + 1, kline, kcol);
		sc->key[base] = '\0';
		ws(sc);
		int c = peek(sc);
		if (c == ',') {
			adv(sc);
		} else if (c == close) {
			adv(sc);
			return;
		} else {
			sc->ok = false;
		}
	}
}

static void
value(struct scan *sc, int depth, unsigned kline, unsigned kcol)
{
	int c = peek(sc);

	if (depth <= LOC_DEPTH_MAX)
		record(sc, sc->line, sc->col, kline, kcol);
	if (c == '{' || c == '[') {
		if (depth > LOC_DEPTH_MAX) {
			/* Too deep to matter: the schema has no such keys. Stop recording. */
			sc->ok = false;
			return;
		}
		members(sc, depth, c == '{');
	} else if (c == '"') {
		string(sc, NULL, 0);
	} else if (c < 0) {
		sc->ok = false;
	} else {
		while (sc->i < sc->len && !strchr(",]} \t\r\n", sc->s[sc->i]) && sc->s[sc->i])
			adv(sc);
	}
}

static int
cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct loc_entry *)a)->key, ((const struct loc_entry *)b)->key);
}

struct locator *
locator_new(const char *text, size_t len)
{
	struct locator *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	struct scan sc = {.s = text, .len = len, .line = 1, .col = 1, .l = l, .ok = true};
	ws(&sc);
	value(&sc, 0, 0, 0);
	/* A partial table is still useful: positions found so far are right. */
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_entry);
	return l;
}

struct locator *
locator_free(struct locator *l)
{
	if (!l)
		return NULL;
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].key);
	free(l->v);
	free(l);
	return NULL;
}

/* Finds key, or the nearest enclosing key that was recorded. */
void
locator_find(const struct locator *l, const char *key, bool want_key, unsigned *line, unsigned *col)
{
	char buf[LOC_KEY_MAX];

	*line = 1;
	*col = 1;
	if (!l)
		return;
	snprintf(buf, sizeof(buf), "%s", key);
	for (;;) {
		struct loc_entry probe = {.key = buf}, *e;
		e = bsearch(&probe, l->v, l->n, sizeof(*l->v), cmp_entry);
		if (e) {
			bool k = want_key && e->kline;
			*line = k ? e->kline : e->line;
			*col = k ? e->kcol : e->col;
			return;
		}
		want_key = false;
		char *dot = strrchr(buf, '.'), *br = strrchr(buf, '[');
		char *cut = dot > br ? dot : br;
		if (!cut) {
			if (!buf[0])
				return;
			buf[0] = '\0';
			continue;
		}
		*cut = '\0';
	}
}
