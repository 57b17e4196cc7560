/*
 * cli_output.c - output files and standard output for every ksmkit command
 * (cli_output.h): identity of files by device and inode, and write errors
 * kept with their errno wherever stdio meets them (in a library's own
 * fflush, in fclose), each reported once.
 */
#include "config.h"
#include "cli_output.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- the same file ------------------------------------------------------------------- */

/* @path's directory resolved, then its last component: a name for a file yet to exist. */
static bool future_name(const char *path, char *out, size_t len)
{
	char dir_copy[PATH_MAX], base_copy[PATH_MAX], dir[PATH_MAX];

	if (strlen(path) >= sizeof(dir_copy))
		return false;
	strcpy(dir_copy, path);
	strcpy(base_copy, path);
	if (!realpath(dirname(dir_copy), dir))
		return false;
	return snprintf(out, len, "%s/%s", dir, basename(base_copy)) < (int)len;
}

/* Whether @a and @b name one file: one inode, or one path for files not there yet. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	bool ha = stat(a, &sa) == 0, hb = stat(b, &sb) == 0;
	char na[PATH_MAX + 1], nb[PATH_MAX + 1];

	if (ha && hb)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (ha || hb)
		return false;
	return future_name(a, na, sizeof(na)) && future_name(b, nb, sizeof(nb)) &&
	       strcmp(na, nb) == 0;
}

static bool is_stdin(const char *path)
{
	return strcmp(path, "-") == 0;
}

int cli_check_outputs(const char *cmd, const struct cli_file *outputs, size_t noutputs,
		      const struct cli_file *inputs, size_t ninputs)
{
	for (size_t o = 0; o < noutputs; o++) {
		const struct cli_file *out = &outputs[o];

		if (!out->path)
			continue;
		for (size_t i = 0; i < ninputs; i++) {
			const struct cli_file *in = &inputs[i];
			struct stat st;

			/* an input that is not there is its reader's error, not ours */
			if (!in->path || is_stdin(in->path) || stat(in->path, &st) != 0 ||
			    !same_file(out->path, in->path))
				continue;
			cli_error("%s: %s %s is %s %s: refusing to overwrite it", cmd, out->what,
				  out->path, in->what, in->path);
			return CLI_USAGE;
		}
		for (size_t p = 0; p < o; p++) {
			if (!outputs[p].path || !same_file(out->path, outputs[p].path))
				continue;
			cli_error("%s: %s %s and %s %s are the same file", cmd, outputs[p].what,
				  outputs[p].path, out->what, out->path);
			return CLI_USAGE;
		}
	}
	return 0;
}

/* --- streams that remember why a write failed -------------------------------------- */

/*
 * stdio forgets: once a flush fails, the buffer is dropped and the stream
 * only says ferror(). So outputs are stdio streams over these cookies,
 * whose write keeps the first errno; a command's whole run has only a few
 * outputs open at once.
 */
struct watched {
	FILE *f;    /* NULL: slot free */
	int fd;
	int error;  /* the first failed write's or close's errno, or 0 */
};

static struct watched watched[8];

static ssize_t watched_write(void *cookie, const char *buf, size_t size)
{
	struct watched *w = cookie;
	size_t done = 0;

	while (done < size) {
		ssize_t n = write(w->fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!w->error)
				w->error = n < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int watched_close(void *cookie)
{
	struct watched *w = cookie;

	if (close(w->fd) != 0 && !w->error && errno != EBADF)
		w->error = errno;
	return w->error ? -1 : 0;
}

static struct watched *watch(int fd, bool line_buffered)
{
	static const cookie_io_functions_t io = { NULL, watched_write, NULL, watched_close };

	for (size_t i = 0; i < sizeof(watched) / sizeof(watched[0]); i++) {
		struct watched *w = &watched[i];

		if (w->f)
			continue;
		*w = (struct watched){ NULL, fd, 0 };
		if (!(w->f = fopencookie(w, "w", io)))
			return NULL;
		setvbuf(w->f, NULL, line_buffered ? _IOLBF : _IOFBF, BUFSIZ);
		return w;
	}
	errno = EMFILE;
	return NULL;
}

static struct watched *watched_of(FILE *f)
{
	for (size_t i = 0; i < sizeof(watched) / sizeof(watched[0]); i++)
		if (watched[i].f == f)
			return &watched[i];
	return NULL;
}

void cli_watch_stdout(void)
{
	struct watched *w;

	fflush(stdout);
	if ((w = watch(STDOUT_FILENO, isatty(STDOUT_FILENO))))
		stdout = w->f; /* glibc's stdout is an ordinary variable */
}

/*
 * Flush and close @f: 0, or the errno of the first write that failed, now
 * or earlier.
 */
static int close_error(FILE *f)
{
	struct watched *w = watched_of(f);
	bool earlier = ferror(f) != 0;
	int err = 0, rc;

	errno = 0;
	if (fflush(f) != 0)
		err = errno ? errno : EIO;
	errno = 0;
	rc = fclose(f);
	if (w) {
		err = w->error ? w->error : err;
		w->f = NULL;
	} else if (rc != 0 && !err && errno != EBADF) {
		err = errno ? errno : EIO;
	}
	return err ? err : earlier ? EIO : 0;
}

/* --- output files --------------------------------------------------------------------- */

FILE *cli_output_open(const char *cmd, const char *path)
{
	struct watched *w;
	int fd, err;

	if (!path)
		return stdout;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd >= 0 && (w = watch(fd, false)))
		return w->f;
	err = errno;
	if (fd >= 0)
		close(fd);
	cli_error("%s: cannot write %s: %s", cmd, path, strerror(err));
	return NULL;
}

int cli_output_close(const char *cmd, FILE *out, const char *path)
{
	struct watched *w;
	int err;

	if (!out)
		return CLI_FAILED;
	if (out == stdout) {
		/* flushed now, closed and reported at exit */
		w = watched_of(out);
		return fflush(out) != 0 || ferror(out) || (w && w->error) ? CLI_FAILED : CLI_OK;
	}
	if (!(err = close_error(out)))
		return CLI_OK;
	cli_error("%s: cannot write %s: %s", cmd, path, strerror(err));
	return CLI_FAILED;
}

int cli_finish_stdout(int status)
{
	int err = close_error(stdout);

	if (!err)
		return status;
	cli_error("writing standard output: %s", strerror(err));
	return status == CLI_USAGE ? CLI_USAGE : CLI_FAILED;
}
