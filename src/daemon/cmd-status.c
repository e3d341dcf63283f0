/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-status.c: `pagecache status`: ask the daemon how its services
 * stand, over its Unix socket (daemon.h's wire format), and print that
 * with the usual renderers: a table, --json, --kv or --prom. The daemon
 * decides what this caller may see (its credentials, SO_PEERCRED).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "daemon/daemon.h"

#include <errno.h>
#include <stdint.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const struct ocol status_cols[] = {
	{ "service", "SERVICE", true }, { "state", "STATE", true }, { "up", "UP", true },
	{ "snapshot_time", "SNAPSHOT", true }, { "snapshot_result", "RESULT", true },
	{ "snapshot_pages", "PAGES", false }, { "snapshot_bytes", "BYTES", false },
	{ "next_snapshot_time", "NEXT", true }, { "restore_result", "RESTORE", true },
	{ "restore_read_bytes", "READ", false }, { "restore_seconds", "TOOK", false },
	{ "locked", "LOCKED", true },
};

struct status_cli {
	const char *socket;		/* --socket; default DAEMON_SOCKET */
};

enum { OPT_SOCKET = CLI_OPT_OWN };
static const struct cli_opt status_opts[] = {
	CLI_OPT_COLUMNS,
	{ .name = "socket", .id = OPT_SOCKET, .arg = "PATH", .comp = CC_FILE,
	  CLI_STRING(struct status_cli, socket),
	  .help = "the daemon's socket (" DAEMON_SOCKET ")" },
	{ 0 }
};

const struct cli_spec status_spec = {
	.name = "status",
	.usage =
	"Usage: pagecache status [--json] [--socket PATH]\n"
	"\n"
	"Ask the running `pagecache daemon` how its services stand: the last\n"
	"snapshot (when, written or kept, pages, bytes), the next one due, the\n"
	"start-up restore (how long, pages read) and the lock set. Root sees every\n"
	"service; any other user only those whose last snapshot read only files it\n"
	"owns or could open for writing (the kernel's own rule for seeing a file's\n"
	"residency), as that snapshot recorded them. The exchange has 5 s in all.\n"
	"\n",
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache status\n"
	"  pagecache status --json | jq '.services[] | {service, snapshot_time}'\n"
	"Exit status: 0 answered; 1 no daemon answered (said); 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", status_opts }, &cli_format_group },
	.operands = CC_NONE,
	.cols = status_cols,
	.ncols = sizeof(status_cols) / sizeof(status_cols[0]),
};

/* the whole answer, at most 4 MiB, within 5 s */
static char *ask(const char *path, int *ret_err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	double end = pc_now() + 5;
	int fd;

	*ret_err = 0;
	if (!buf)
		return *ret_err = ENOMEM, NULL;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		free(buf);
		return *ret_err = ENAMETOOLONG, NULL;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/*
	 * The limit covers the connect too: a daemon that stopped accepting
	 * (hung, or its listen backlog full) would hold a plain connect()
	 * forever. A Unix socket's connect waits for room in the backlog for
	 * SO_SNDTIMEO at most, then says EAGAIN.
	 */
	if (fd >= 0) {
		struct timeval tv = { .tv_sec = 5 };

		if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		*ret_err = errno == EAGAIN || errno == EINPROGRESS ? ETIMEDOUT : errno;
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	{	/* the daemon is root's, or ours: not another user's program */
		struct ucred cr;
		socklen_t cl = sizeof(cr);

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 ||
		    (cr.uid != 0 && cr.uid != geteuid())) {
			*ret_err = EPERM;
			close(fd);
			free(buf);
			return NULL;
		}
	}
	for (;;) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int left = (int)((end - pc_now()) * 1000);
		ssize_t n;

		if (left <= 0 || poll(&pf, 1, left) <= 0) {
			*ret_err = ETIMEDOUT;
			break;
		}
		if (len + 1 >= cap) {
			char *g = cap < (4u << 20) ? realloc(buf, cap * 2) : NULL;

			if (!g) {
				*ret_err = EFBIG;
				break;
			}
			buf = g;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				*ret_err = errno;
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	if (*ret_err) {
		free(buf);
		return NULL;
	}
	buf[len] = 0;
	return buf;
}

static char *fmt_time(uint64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t > (uint64_t)INT64_MAX || !gmtime_r(&tt, &tm) ||
	    !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "%llu", (unsigned long long)t);
	return buf;
}

int cmd_status(int argc, char **argv)
{
	struct cli_opts co = { OUT_HUMAN };
	struct status_cli cl = { DAEMON_SOCKET };
	char *answer, *line, *next, *fields[64];
	int nf = 0, err, rc;
	size_t rows = 0;
	bool ended = false;

	rc = cli_parse_format_only(&status_spec, &cl, &co, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return cli_usage_error("no operands (the daemon's services are in its configuration)");
	out_init(co.fmt, co.bytes, co.noheadings);
	out_set_raw(co.raw);
	/* a series per service, as the daemon's textfile has them */
	out_prom_opts(true, co.prom_file);
	out_prom_metrics("service", dmetrics, ndmetrics);
	answer = ask(cl.socket, &err);
	if (!answer) {
		cli_fail_msg(cl.socket, "no pagecache daemon answered on",
			     err == ENOENT || err == ECONNREFUSED
				     ? "it is not running (pagecache daemon, or systemctl start pagecache)"
				     : err == EPERM ? "the program there is neither root's nor yours"
				     : err == ETIMEDOUT ? "it did not answer within 5 s (hung, or too busy to accept)"
						    : strerror(err));
		out_flush();
		return EXIT_PARTIAL;
	}
	out_columns("services", status_cols, sizeof(status_cols) / sizeof(status_cols[0]));
	out_list_declare("services");
	for (line = answer; line && *line; line = next) {
		char *tok, *save = NULL;
		struct orec r = { 0 };
		int k = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (line == answer) {
			if (strcmp(line, "pagecache-status 1"))
				break;
			continue;
		}
		if (!strncmp(line, "fields\t", 7)) {
			nf = 0;
			for (tok = strtok_r(line + 7, "\t", &save); tok && nf < 64;
			     tok = strtok_r(NULL, "\t", &save))
				fields[nf++] = tok;
			continue;
		}
		if (!strcmp(line, "end")) {
			ended = true;
			break;
		}
		for (char *s = line; k < nf; k++) {
			char *tab = strchr(s, '\t');
			const struct dfield *df = NULL;

			if (tab)
				*tab = 0;
			for (size_t i = 0; i < ndfields; i++)
				if (!strcmp(dfields[i].name, fields[k]))
					df = &dfields[i];
			if (df && strcmp(s, "-") && dwire_unescape(s)) {
				char tb[40], *end;
				uint64_t u;

				switch (df->type) {
				case DF_STR:
					orec_str(&r, df->name, s, 0);
					break;
				case DF_BOOL:
					orec_bool(&r, df->name, !strcmp(s, "yes"));
					break;
				case DF_F64:
					orec_f64(&r, df->name, strtod(s, NULL));
					break;
				case DF_U64:
				case DF_TIME:
					errno = 0;
					u = strtoull(s, &end, 10);
					if (errno || *end)
						break;
					if (df->type == DF_TIME && co.fmt == OUT_HUMAN)
						orec_str(&r, df->name, fmt_time(u, tb, sizeof(tb)), 0);
					else
						orec_u64(&r, df->name, u, df->flags);
					break;
				}
			} else if (df) {
				orec_null(&r, df->name);
			}
			if (!tab)
				break;
			s = tab + 1;
		}
		if (!r.n || r.f[0].type != OF_STR || strcmp(r.f[0].key, "service") ||
		    !dsvc_valid_name(r.f[0].s)) {
			orec_release(&r);	/* not a name the daemon gives: not shown */
			continue;
		}
		out_list_add("services", &r);
		rows++;
	}
	free(answer);
	if (!ended) {
		cli_fail_msg(cl.socket, "a broken answer from", "not a pagecache daemon of this version?");
		out_flush();
		return EXIT_PARTIAL;
	}
	if (co.fmt == OUT_HUMAN && !rows)
		out_human_line("No services to show (none configured, or none whose files you "
			       "may write)");
	if (out_flush() < 0)
		return EXIT_PARTIAL;
	return cli_failures() ? EXIT_PARTIAL : 0;
}
