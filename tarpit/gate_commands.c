// SPDX-License-Identifier: GPL-2.0-or-later
/* The gate's commands (gate.c says what the gate is): each client command
 * taken one at a time, written anew from its parse for the MTA, a RCPT
 * asked of greygated first; and what the MTA's answers change. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gate-int.h"
#include "log.h"
#include "smtp_line.h"
#include "smtp_reply.h"

/* A reply of the gate's own. Return: false (c closed: the client is
 * gone). */
bool
gate_say(struct conn *c, const char *text)
{
	if (conn_send(c, text, strlen(text)))
		return true;
	conn_close(c);
	return false;
}

/* The line goes to the MTA, whose answer is awaited. */
void
gate_pass_on(struct gate *g, const char *line, size_t len, enum gate_sent sent)
{
	memcpy(g->out + g->out_len, line, len);
	memcpy(g->out + g->out_len + len, "\r\n", 2);
	g->out_len += len + 2;
	g->sent = sent;
	g->step = G_REPLY;
}

/* The line written from the parse goes to the MTA; a command that cannot
 * be written is answered here with refusal. Return: false (c closed). */
static bool
pass_rebuilt(struct conn *c, const struct smtp_command *cmd,
	     enum gate_sent sent, const char *refusal)
{
	char line[SMTP_REBUILT_MAX + 1];
	size_t n = smtp_command_rebuild(cmd, line);

	if (!n)
		return gate_say(c, refusal);
	gate_pass_on(c->gate, line, n, sent);
	return true;
}

bool
gate_answer_held(struct conn *c, const struct tarpit_verdict *v)
{
	char out[TARPIT_REPLY_MAX];
	size_t n = tarpit_rcpt_held_reply(&c->dlg, v, c->rcpt ? c->rcpt : "",
					  out);

	c->gate->step = G_COMMAND;
	if (conn_send(c, out, n))
		return true;
	conn_close(c);
	return false;
}

/* A RCPT: greygated is asked, as at the tarpit; the MTA hears it only on
 * a pass (verdict). */
static bool
ask_rcpt(struct conn *c, const struct smtp_command *cmd)
{
	struct gate *g = c->gate;
	char line[SMTP_REBUILT_MAX + 1];
	size_t len;

	if (!g->in_mail)
		return gate_say(c, "503 5.5.1 Error: need MAIL command\r\n");
	if (cmd->path_status == SMTP_PATH_SYNTAX)
		return gate_say(c, "501 5.5.4 Syntax: RCPT TO:<address>\r\n");
	if (cmd->path_status != SMTP_PATH_OK || cmd->path_len == 0)
		return gate_say(c, "501 5.1.3 Bad recipient address syntax\r\n");
	if (g->asks >= TARPIT_ASKS_MAX)
		return gate_say(c, "452 4.5.3 Error: too many recipients\r\n");
	len = smtp_command_rebuild(cmd, line);
	if (!len)
		return gate_say(c, "555 5.5.4 Unsupported option\r\n");
	free(c->rcpt);
	free(c->rcpt_line);
	c->rcpt = strndup(cmd->path, cmd->path_len);
	c->rcpt_line = strndup(line, len);
	if (!c->rcpt || !c->rcpt_line)
		return gate_answer_held(c, NULL);
	g->asks++;
	c->dlg.asking = TARPIT_ASK_RCPT;
	if (conn_ask(c) < 0) {
		c->dlg.asking = TARPIT_ASK_NONE;
		return gate_answer_held(c, NULL);
	}
	g->step = G_VERDICT;
	return true;
}

/* A BDAT: passed on with its chunk only where the MTA takes the chunk as
 * data; elsewhere answered here and its chunk dropped. Return: false (c
 * closed). */
static bool
bdat(struct conn *c, const struct smtp_command *cmd)
{
	struct gate *g = c->gate;
	const char *refusal = NULL;

	if (!cmd->bdat_ok) {
		gate_say(c, "421 4.7.0 Error: bad BDAT size\r\n");
		conn_close_gently(c);
		return false;
	}
	if (!g->chunking)
		refusal = "502 5.5.1 Error: command not recognized\r\n";
	else if (!g->in_mail)
		refusal = "503 5.5.1 Error: need MAIL command\r\n";
	else if (!g->rcpt_taken)
		refusal = "554 5.5.1 Error: no valid recipients\r\n";
	g->chunk_left = cmd->bdat_size;
	if (refusal) {
		if (g->chunk_left)
			g->step = G_SKIP;
		return gate_say(c, refusal);
	}
	if (!pass_rebuilt(c, cmd, cmd->bdat_last ? SENT_LAST_CHUNK : SENT_CHUNK,
			  "501 5.5.4 Syntax error in parameters\r\n"))
		return false;
	if (g->chunk_left)
		g->step = G_CHUNK;
	return true;
}

/* One command line of the client's. Return: false (c closed). */
bool
gate_command(struct conn *c, const char *line, size_t len)
{
	struct gate *g = c->gate;
	struct smtp_command cmd;

	smtp_command_parse(line, len, &cmd);
	switch (cmd.verb) {
	case SMTP_VERB_RCPT:
		return ask_rcpt(c, &cmd);
	case SMTP_VERB_STARTTLS:
		return gate_say(c, "454 4.7.0 TLS not available due to temporary "
			      "reason\r\n");
	case SMTP_VERB_MAIL:
		if (cmd.path_status == SMTP_PATH_SYNTAX)
			return gate_say(c, "501 5.5.4 Syntax: MAIL FROM:<address>\r\n");
		if (cmd.path_status != SMTP_PATH_OK)
			return gate_say(c, "501 5.1.7 Bad sender address syntax\r\n");
		g->sender[0] = 0;
		if (cmd.path_len < sizeof(g->sender)) {
			memcpy(g->sender, cmd.path, cmd.path_len);
			g->sender[cmd.path_len] = 0;
		}
		return pass_rebuilt(c, &cmd, SENT_MAIL,
				    "555 5.5.4 Unsupported option\r\n");
	case SMTP_VERB_DATA:
		return pass_rebuilt(c, &cmd, SENT_DATA,
				    "501 5.5.4 Syntax: DATA\r\n");
	case SMTP_VERB_BDAT:
		return bdat(c, &cmd);
	case SMTP_VERB_HELO:
	case SMTP_VERB_EHLO:
		free(c->helo);
		c->helo = malloc(SMTP_HELO_NAME_MAX + 1);
		if (c->helo)
			smtp_printable_copy(c->helo, SMTP_HELO_NAME_MAX + 1,
					    cmd.helo, cmd.helo_len);
		return pass_rebuilt(c, &cmd, SENT_RESET,
				    "501 5.5.4 Syntax: EHLO hostname\r\n");
	case SMTP_VERB_RSET:
		return pass_rebuilt(c, &cmd, SENT_RESET,
				    "501 5.5.4 Syntax: RSET\r\n");
	case SMTP_VERB_NOOP:
		return pass_rebuilt(c, &cmd, SENT_OTHER,
				    "501 5.5.4 Syntax: NOOP\r\n");
	case SMTP_VERB_QUIT:
		return pass_rebuilt(c, &cmd, SENT_QUIT,
				    "501 5.5.4 Syntax: QUIT\r\n");
	default:
		/* (XCLIENT and XFORWARD too: the MTA trusts them from
		 * greygate's own connection) */
		return gate_say(c, "502 5.5.2 Error: command not recognized\r\n");
	}
}

/* What the MTA's answer to what was passed on changes. Return: false (c
 * closed). */
bool
gate_answered(struct conn *c, int code)
{
	struct gate *g = c->gate;

	g->step = G_COMMAND;
	switch (g->sent) {
	case SENT_MAIL:
		if (code / 100 == 2) {
			g->in_mail = true;
			g->rcpt_taken = false;
			free(c->sender);
			c->sender = strdup(g->sender);
		}
		break;
	case SENT_RCPT:
		if (code / 100 == 2)
			g->rcpt_taken = true;
		break;
	case SENT_DATA:
		if (code == 354) {
			g->step = G_BODY;
			g->eod = EOD_LINE_START;
		}
		break;
	case SENT_BODY:
	case SENT_LAST_CHUNK:
	case SENT_RESET:
		g->in_mail = g->rcpt_taken = false;
		break;
	case SENT_QUIT:
		conn_close_gently(c);
		return false;
	default:
		break;
	}
	return true;
}
