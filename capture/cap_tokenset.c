/*
 * cap_tokenset.c - a set of non-zero 64-bit content tokens, each with a
 * 64-bit value: open addressing with linear probing over a power-of-two
 * table kept at most half full. Tokens are already good hashes, so their
 * low bits index the table directly. The writer keeps the tokens whose
 * bytes it stored, the reader where each one's bytes are, the summary the
 * distinct tokens of a snapshot.
 */
#include "cap_internal.h"

#include <stdlib.h>

int cap_tokenset_init(struct cap_tokenset *s, size_t expect)
{
	size_t cap = 64;

	while (cap / 2 < expect)
		cap *= 2;
	s->n = 0;
	s->mask = cap - 1;
	s->keys = calloc(cap, sizeof(*s->keys));
	s->vals = calloc(cap, sizeof(*s->vals));
	if (!s->keys || !s->vals) {
		cap_tokenset_free(s);
		return -1;
	}
	return 0;
}

void cap_tokenset_free(struct cap_tokenset *s)
{
	free(s->keys);
	free(s->vals);
	s->keys = s->vals = NULL;
	s->n = s->mask = 0;
}

static size_t slot_of(const struct cap_tokenset *s, uint64_t token)
{
	size_t i = (size_t)token & s->mask;

	while (s->keys[i] && s->keys[i] != token)
		i = (i + 1) & s->mask;
	return i;
}

static int grow(struct cap_tokenset *s)
{
	struct cap_tokenset bigger;

	if (cap_tokenset_init(&bigger, (s->mask + 1)) != 0)
		return -1;
	for (size_t i = 0; i <= s->mask; i++) {
		if (s->keys[i]) {
			size_t j = slot_of(&bigger, s->keys[i]);

			bigger.keys[j] = s->keys[i];
			bigger.vals[j] = s->vals[i];
		}
	}
	bigger.n = s->n;
	cap_tokenset_free(s);
	*s = bigger;
	return 0;
}

uint64_t *cap_tokenset_add(struct cap_tokenset *s, uint64_t token, bool *added)
{
	size_t i;

	*added = false;
	if (token == CAP_TOKEN_ZERO)
		return NULL;
	if ((s->n + 1) * 2 > s->mask + 1 && grow(s) != 0)
		return NULL;
	i = slot_of(s, token);
	if (!s->keys[i]) {
		s->keys[i] = token;
		s->vals[i] = 0;
		s->n++;
		*added = true;
	}
	return &s->vals[i];
}

const uint64_t *cap_tokenset_find(const struct cap_tokenset *s, uint64_t token)
{
	size_t i;

	if (token == CAP_TOKEN_ZERO || !s->keys)
		return NULL;
	i = slot_of(s, token);
	return s->keys[i] ? &s->vals[i] : NULL;
}
