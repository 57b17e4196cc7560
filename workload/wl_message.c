/*
 * wl_message.c - the parser's error messages: recording the first one, as
 * "PATH:LINE: message", for the caller to print.
 */
#include "wl_internal.h"

#include <stdarg.h>
#include <string.h>

void wl_fail(struct wl_ctx *ctx, unsigned line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	if (ctx->failed)
		return;
	ctx->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctx->err->line = line;
	if (line)
		snprintf(ctx->err->text, sizeof(ctx->err->text), "%s:%u: %s", ctx->wl->path, line,
			 msg);
	else
		snprintf(ctx->err->text, sizeof(ctx->err->text), "%s: %s", ctx->wl->path, msg);
}
