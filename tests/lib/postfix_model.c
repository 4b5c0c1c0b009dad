// SPDX-License-Identifier: GPL-2.0-or-later
/* A model of Postfix's reading of an SMTP command line (see
 * postfix_model.h). */
#include "postfix_model.h"

#include <string.h>
#include <strings.h>

#define WORDS_MAX 16
#define WORD_MAX 2048

struct word {
	char text[WORD_MAX + 1];
	size_t len;
	bool broken; /* a quote or bracket that never closed */
};

static bool
space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static void
add(struct word *w, char c)
{
	if (w->len < WORD_MAX)
		w->text[w->len++] = c;
	w->text[w->len] = 0;
}

/* A quoted stretch from its opening byte (already at s[*i - 1]): kept
 * with its quotes, nested '<' counted inside '<', a quote inside either
 * taking precedence, a backslash escaping the byte after it. */
static void
quoted(const char *s, size_t *i, struct word *w, char open, char close)
{
	char stack[WORD_MAX * 2 + 2]; /* (as deep as the line is long) */
	size_t depth = 0;

	stack[depth++] = close;
	add(w, open);
	while (s[*i]) {
		char c = s[(*i)++];

		add(w, c);
		if (c == '\\') {
			if (!s[*i])
				break;
			add(w, s[(*i)++]);
		} else if (c == stack[depth - 1]) {
			if (depth == 1)
				return;
			depth--;
		} else if (c == '"') {
			stack[depth++] = '"';
		} else if (c == '<' && stack[depth - 1] == '>') {
			stack[depth++] = '>';
		}
	}
	w->broken = true;
}

/* The next word from s[*i]; false when none is left. */
static bool
next_word(const char *s, size_t *i, struct word *w)
{
	w->len = 0;
	w->text[0] = 0;
	w->broken = false;
	while (s[*i]) {
		char c = s[(*i)++];

		if (space(c)) {
			while (s[*i] && space(s[*i]))
				(*i)++;
			if (w->len)
				break;
		} else if (c == '<' || c == '"') {
			quoted(s, i, w, c, c == '<' ? '>' : '"');
		} else if (c == ':') {
			add(w, c);
			if (!strcasecmp(w->text, "to:") ||
			    !strcasecmp(w->text, "from:"))
				break;
		} else {
			if (c == '\\') {
				add(w, c);
				if (!s[*i])
					break;
				c = s[(*i)++];
			}
			add(w, c);
		}
	}
	return w->len > 0;
}

static enum smtp_verb
verb_named(const char *w)
{
	static const struct {
		const char *name;
		enum smtp_verb verb;
	} verbs[] = {
	        {"HELO", SMTP_VERB_HELO},
	        {"EHLO", SMTP_VERB_EHLO},
	        {"MAIL", SMTP_VERB_MAIL},
	        {"RCPT", SMTP_VERB_RCPT},
	        {"DATA", SMTP_VERB_DATA},
	        {"BDAT", SMTP_VERB_BDAT},
	        {"RSET", SMTP_VERB_RSET},
	        {"NOOP", SMTP_VERB_NOOP},
	        {"QUIT", SMTP_VERB_QUIT},
	        {"VRFY", SMTP_VERB_VRFY},
	        {"EXPN", SMTP_VERB_EXPN},
	        {"HELP", SMTP_VERB_HELP},
	        {"AUTH", SMTP_VERB_AUTH},
	        {"STARTTLS", SMTP_VERB_STARTTLS},
	        {"XCLIENT", SMTP_VERB_XCLIENT},
	};

	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcasecmp(w, verbs[i].name))
			return verbs[i].verb;
	return SMTP_VERB_OTHER;
}

/* The address in a word, read plainly: brackets off, a source route off;
 * nothing an RFC 822 parser would take for more than one mailbox's
 * characters. Quotes only around a whole local part. */
static bool
plain_address(const char *w, size_t len, char *out)
{
	size_t i = 0, o = 0;

	if (len >= 2 && w[0] == '<' && w[len - 1] == '>') {
		w++;
		len -= 2;
	} else if (memchr(w, '<', len) || memchr(w, '>', len)) {
		return false;
	}
	if (len && w[0] == '@') { /* "@a,@b:" */
		const char *colon = memchr(w, ':', len);

		if (!colon)
			return false;
		i = (size_t)(colon - w) + 1;
	}
	if (i < len && w[i] == '"') {
		const char *close = memchr(w + i + 1, '"', len - i - 1);

		if (!close || memchr(w + i, '\\', (size_t)(close - (w + i))))
			return false;
		while (w + i <= close)
			out[o++] = w[i++];
	}
	for (; i < len; i++) {
		if (w[i] == '[' && o && out[o - 1] == '@') {
			/* a domain literal, to the word's end */
			if (w[len - 1] != ']')
				return false;
			for (size_t k = i + 1; k + 1 < len; k++)
				if (space(w[k]) || strchr("[]\\", w[k]))
					return false;
			while (i < len)
				out[o++] = w[i++];
			break;
		}
		if (space(w[i]) || strchr("<>()[],;:\\\"", w[i]))
			return false;
		out[o++] = w[i];
	}
	out[o] = 0;
	return true;
}

void
postfix_read(const char *line, size_t len, struct postfix_reading *out)
{
	static struct word words[WORDS_MAX];
	char s[WORD_MAX * 2 + 1];
	size_t i = 0, n = 0;

	memset(out, 0, sizeof(*out));
	/* a C string: it ends at the first NUL */
	len = len < sizeof(s) - 1 ? len : sizeof(s) - 1;
	memcpy(s, line, len);
	s[len] = 0;
	while (n < WORDS_MAX && next_word(s, &i, &words[n]))
		n++;
	if (n == 0)
		return;
	out->verb = verb_named(words[0].text);
	if ((out->verb != SMTP_VERB_MAIL && out->verb != SMTP_VERB_RCPT) ||
	    n < 3 || words[2].broken ||
	    strcasecmp(words[1].text,
	               out->verb == SMTP_VERB_MAIL ? "from:" : "to:"))
		return;
	out->has_address = true;
	out->plain = plain_address(words[2].text, words[2].len, out->address);
}
