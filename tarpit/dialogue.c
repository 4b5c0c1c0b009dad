// SPDX-License-Identifier: GPL-2.0-or-later
/* The tarpit's SMTP dialogue: one command line in, one reply out (or a
 * question for greygated first, answered when its verdict comes). Pure:
 * no sockets, no allocation, every copy bounded. Nothing a client sends is
 * ever accepted: RCPT gets 451 (or, for the null sender, DATA does). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "smtp_command.h"
#include "tarpit.h"

void
tarpit_dialogue_init(struct tarpit_dialogue *d, const struct tarpit_config *cfg)
{
	memset(d, 0, sizeof(*d));
	d->cfg = cfg;
}

size_t
tarpit_banner(const struct tarpit_config *cfg, char *out, size_t len)
{
	int n = snprintf(out, len, "220 %s ESMTP\r\n", cfg->hostname);

	return n < 0 ? 0 : (size_t)n >= len ? len - 1 : (size_t)n;
}

static size_t
reply(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));


static size_t
reply(char *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, TARPIT_REPLY_MAX, fmt, ap);
	va_end(ap);
	if (n < 0)
		return 0;
	return (size_t)n >= TARPIT_REPLY_MAX ? TARPIT_REPLY_MAX - 1 : (size_t)n;
}

/* A refused recipient's 550: why, as Postfix says it (the sender's
 * domain: reject_unknown_sender_domain's words; a null MX: RFC 7505
 * section 4.2's code). */
static size_t
refusal(char *out, uint8_t why, const char *rcpt)
{
	switch (why) {
	case TARPIT_REFUSED_SPF:
		return reply(out,
		             "550 5.7.23 <%.256s>: SPF does not let this "
		             "client send for the sender's domain\r\n",
		             rcpt);
	case TARPIT_REFUSED_SENDER_DOMAIN:
		return reply(out,
		             "550 5.1.8 <%.256s>: Sender address "
		             "rejected: Domain not found\r\n",
		             rcpt);
	case TARPIT_REFUSED_SENDER_NULL_MX:
		return reply(out,
		             "550 5.7.27 <%.256s>: Sender address "
		             "rejected: Domain does not accept mail "
		             "(null MX)\r\n",
		             rcpt);
	default:
		return reply(out,
		             "550 5.1.1 <%.256s>: Recipient address "
		             "rejected: User unknown\r\n",
		             rcpt);
	}
}

/* Appends "250-KEYWORD\r\n" if it fits; *last gets where it starts. */
static size_t
ehlo_line(char *out, size_t n, size_t *last, const char *kw, size_t kl)
{
	if (kl == 0 || n + kl + 6 >= TARPIT_REPLY_MAX)
		return n;
	*last = n;
	memcpy(out + n, "250-", 4);
	memcpy(out + n + 4, kw, kl);
	memcpy(out + n + 4 + kl, "\r\n", 2);
	return n + kl + 6;
}

static size_t
ehlo_reply(const struct tarpit_config *cfg, char *out)
{
	const char *caps = cfg->capabilities ? cfg->capabilities : "";
	size_t n = 0, last = 0;

	n = ehlo_line(out, n, &last, cfg->hostname, strlen(cfg->hostname));
	while (*caps) {
		size_t kl = strcspn(caps, ",");
		const char *kw = caps;

		caps += kl + (caps[kl] == ',');
		while (kl > 0 && *kw == ' ') {
			kw++;
			kl--;
		}
		while (kl > 0 && kw[kl - 1] == ' ')
			kl--;
		n = ehlo_line(out, n, &last, kw, kl);
	}
	if (cfg->offer_starttls)
		n = ehlo_line(out, n, &last, "STARTTLS", 8);
	out[last + 3] = ' '; /* the last line is "250 " */
	out[n] = 0;
	return n;
}

static int
bad_command(struct tarpit_dialogue *d, char *out, size_t *out_len,
	    const char *text)
{
	d->bad++;
	if (d->cfg->max_bad_commands && d->bad >= d->cfg->max_bad_commands) {
		*out_len = reply(out, "421 4.7.0 %s Error: too many errors\r\n",
				 d->cfg->hostname);
		return TARPIT_CLOSE;
	}
	*out_len = reply(out, "%s\r\n", text);
	return 0;
}

static void
end_transaction(struct tarpit_dialogue *d)
{
	d->in_mail = 0;
	d->null_sender = 0;
	d->rcpts = 0;
	d->said = TARPIT_SAID_RESET;
}

static void
said(struct tarpit_dialogue *d, enum tarpit_said what, const char *arg,
     size_t len)
{
	d->said = (uint8_t)what;
	d->arg = arg;
	d->arg_len = len;
}

static size_t
greylisted(const struct tarpit_dialogue *d, char *out, const char *rcpt,
	   size_t len, uint32_t wait_sec)
{
	return reply(out, "451 4.7.1 <%.*s>: Greylisted, please try again in "
			  "%u seconds\r\n",
		     (int)(len < 256 ? len : 256), rcpt, wait_sec);
}

/* BDAT: no message is taken here; its chunk is skipped and answered 451
 * (a size too large to skip, or no size: the session ends). */
static int
on_bdat(struct tarpit_dialogue *d, const struct smtp_command *cmd, char *out,
	size_t *out_len)
{
	if (!cmd->bdat_ok || cmd->bdat_size > 100u * 1024 * 1024) {
		*out_len = reply(out, "421 4.7.0 %s Error: bad BDAT size\r\n",
				 d->cfg->hostname);
		return TARPIT_CLOSE;
	}
	d->skip_bytes = (uint32_t)cmd->bdat_size;
	end_transaction(d);
	*out_len = reply(out, "451 4.7.1 Greylisted, please try again in "
			      "%u seconds\r\n",
			 d->data_wait_sec ? d->data_wait_sec : d->cfg->retry_sec);
	return 0;
}

/* A RCPT with a well-formed path of n bytes at path. */
static int
on_rcpt(struct tarpit_dialogue *d, const char *path, int n, char *out,
	size_t *out_len)
{
	if (d->rcpts >= TARPIT_RCPTS_MAX) {
		*out_len = reply(out, "452 4.5.3 Error: too many recipients\r\n");
		return 0;
	}
	d->rcpts++;
	if (d->ask) {
		if (d->asks >= TARPIT_ASKS_MAX) {
			*out_len = reply(out, "421 4.7.0 %s Error: too many "
					      "recipients this session\r\n",
					 d->cfg->hostname);
			return TARPIT_CLOSE;
		}
		d->asks++;
		d->asking = TARPIT_ASK_RCPT;
		said(d, TARPIT_SAID_RCPT, path, (size_t)n);
		return TARPIT_ASK;
	}
	/* Sender-verification callouts use <> and quit after RCPT: answer
	 * them 250 and defer at DATA instead. */
	if (d->null_sender && d->cfg->null_sender_at_data)
		*out_len = reply(out, "250 2.1.5 Ok\r\n");
	else
		*out_len = greylisted(d, out, path, (size_t)n, d->cfg->retry_sec);
	return 0;
}

int
tarpit_dialogue_verdict(struct tarpit_dialogue *d,
			const struct tarpit_verdict *v, const char *rcpt,
			char *out, size_t *out_len)
{
	uint32_t wait = v && v->action == TARPIT_GREYLIST ? v->wait_sec
							  : d->cfg->retry_sec;
	enum tarpit_ask asked = (enum tarpit_ask)d->asking;

	d->asking = TARPIT_ASK_NONE;
	*out_len = 0;
	if (asked == TARPIT_ASK_STARTTLS) {
		/* No TLS here, and a client that asked for it must not go on
		 * in the clear: any reply but 220 lets it (Postfix and the
		 * others then send MAIL and RCPT in plain text). The session
		 * ends without one; the client takes it for a lost
		 * connection and comes back (with tls_pass, passed: on the
		 * fast path, in TLS with the MTA). */
		return TARPIT_CLOSE;
	}
	if (asked != TARPIT_ASK_RCPT)
		return 0;
	/* Refused: said at RCPT, whatever the sender (the MTA behind
	 * would say the same, and no triplet was kept). */
	if (v && v->action == TARPIT_REFUSE) {
		*out_len = refusal(out, v->refused, rcpt);
		return 0;
	}
	if (d->null_sender && d->cfg->null_sender_at_data) {
		d->data_wait_sec = wait;
		*out_len = reply(out, "250 2.1.5 Ok\r\n");
		return 0;
	}
	if (v && v->action == TARPIT_PASS)
		*out_len = reply(out, "451 4.7.1 <%.256s>: Passed greylisting, "
				      "please try again now\r\n",
				 rcpt);
	else
		*out_len = greylisted(d, out, rcpt, strlen(rcpt), wait);
	return 0;
}

size_t
tarpit_rcpt_held_reply(const struct tarpit_dialogue *d,
		       const struct tarpit_verdict *v, const char *rcpt,
		       char *out)
{
	if (v && v->action == TARPIT_REFUSE)
		return refusal(out, v->refused, rcpt);
	return greylisted(d, out, rcpt, strlen(rcpt),
			  v && v->action == TARPIT_GREYLIST ? v->wait_sec
							    : d->cfg->retry_sec);
}

/* MAIL FROM: a path, maybe <> (the null sender). */
static int
on_mail(struct tarpit_dialogue *d, const struct smtp_command *cmd, char *out,
	size_t *out_len)
{
	if (d->in_mail)
		return bad_command(d, out, out_len,
				   "503 5.5.1 Error: nested MAIL command");
	if (cmd->path_status == SMTP_PATH_SYNTAX)
		return bad_command(d, out, out_len,
				   "501 5.5.4 Syntax: MAIL FROM:<address>");
	if (cmd->path_status != SMTP_PATH_OK)
		return bad_command(d, out, out_len,
				   "501 5.1.7 Bad sender address syntax");
	d->in_mail = 1;
	d->null_sender = cmd->path_len == 0;
	d->data_wait_sec = 0;
	said(d, TARPIT_SAID_MAIL, cmd->path, cmd->path_len);
	*out_len = reply(out, "250 2.1.0 Ok\r\n");
	return 0;
}

int
tarpit_dialogue_line(struct tarpit_dialogue *d, const char *line, size_t len,
		     bool too_long, char *out, size_t *out_len)
{
	const struct tarpit_config *cfg = d->cfg;
	struct smtp_command cmd;

	*out_len = 0;
	d->said = TARPIT_SAID_NOTHING;
	if (too_long)
		return bad_command(d, out, out_len,
				   "500 5.5.0 Error: line too long");
	smtp_command_parse(line, len, &cmd);
	switch (cmd.verb) {
	case SMTP_VERB_EHLO:
	case SMTP_VERB_HELO:
		end_transaction(d);
		said(d, TARPIT_SAID_HELO, cmd.helo, cmd.helo_len);
		*out_len = cmd.verb == SMTP_VERB_EHLO
				   ? ehlo_reply(cfg, out)
				   : reply(out, "250 %s\r\n", cfg->hostname);
		return 0;
	case SMTP_VERB_MAIL:
		return on_mail(d, &cmd, out, out_len);
	case SMTP_VERB_RCPT:
		if (!d->in_mail)
			return bad_command(d, out, out_len,
					   "503 5.5.1 Error: need MAIL command");
		if (cmd.path_status == SMTP_PATH_SYNTAX)
			return bad_command(d, out, out_len,
					   "501 5.5.4 Syntax: RCPT TO:<address>");
		if (cmd.path_status != SMTP_PATH_OK || cmd.path_len == 0)
			return bad_command(d, out, out_len,
					   "501 5.1.3 Bad recipient address "
					   "syntax");
		return on_rcpt(d, cmd.path, (int)cmd.path_len, out, out_len);
	case SMTP_VERB_DATA: {
		uint32_t wait = d->data_wait_sec ? d->data_wait_sec
						 : cfg->retry_sec;

		if (!d->in_mail)
			return bad_command(d, out, out_len,
					   "503 5.5.1 Error: need MAIL command");
		end_transaction(d);
		*out_len = reply(out, "451 4.7.1 Greylisted, please try again "
				      "in %u seconds\r\n",
				 wait);
		return 0;
	}
	case SMTP_VERB_BDAT:
		return on_bdat(d, &cmd, out, out_len);
	case SMTP_VERB_STARTTLS:
		if (d->ask && cfg->offer_starttls &&
		    d->asks < TARPIT_ASKS_MAX) {
			d->asks++;
			d->asking = TARPIT_ASK_STARTTLS;
			return TARPIT_ASK;
		}
		*out_len = reply(out, "454 4.7.0 TLS not available due to "
				      "temporary reason\r\n");
		return 0;
	case SMTP_VERB_RSET:
		end_transaction(d);
		*out_len = reply(out, "250 2.0.0 Ok\r\n");
		return 0;
	case SMTP_VERB_NOOP:
		*out_len = reply(out, "250 2.0.0 Ok\r\n");
		return 0;
	case SMTP_VERB_VRFY:
		*out_len = reply(out, "252 2.0.0 Cannot VRFY user\r\n");
		return 0;
	case SMTP_VERB_QUIT:
		*out_len = reply(out, "221 2.0.0 Bye\r\n");
		return TARPIT_CLOSE;
	default:
		/* (EXPN, HELP, AUTH, XCLIENT: not here either) */
		return bad_command(d, out, out_len,
				   "502 5.5.2 Error: command not recognized");
	}
}
