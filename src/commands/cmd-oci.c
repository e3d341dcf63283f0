/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-oci.c: `pagecache push` and `pagecache pull`: a snapshot travels
 * through an OCI registry, the store fleets already run, as a single-layer
 * artifact of its own media types, so that a replica on another node
 * restores what the old one had cached (restore --root maps the paths).
 *
 * No HTTP is written here: skopeo (containers/image) talks to the registry,
 * between it and an OCI image layout in a fresh private directory (0700).
 * skopeo is run by an absolute path that only root or the caller can
 * change, with an environment of only what logging in and proxies need.
 * Plain HTTP is allowed for a registry on this host alone (localhost,
 * 127.0.0.1, [::1]); any other is told to require TLS, whatever
 * registries.conf says. Every run of skopeo shares one deadline
 * (--timeout, from the command's start): at it, skopeo's process group is
 * killed and reaped, and the command fails saying so, whatever the
 * registry does with its connection.
 *
 * pull trusts nothing the registry says: the manifest is read first
 * (skopeo inspect --raw, at most 4 MiB) and must be ours (media types,
 * one layer, no bigger than --max-size) before anything is copied; then
 * exactly that manifest is copied, by digest, with every file skopeo writes
 * bounded by RLIMIT_FSIZE; the layer read back must have the manifest's size
 * and digest and be a whole, valid snapshot, and only then is it renamed
 * over -o FILE (a temporary file beside it, O_EXCL | O_NOFOLLOW, fsync'ed):
 * any failure leaves the old FILE as it was. SHA-256 is nettle's (a
 * dependency of pagecache, not of the library); manifests are read with
 * lib/json.c, whose object pagecache links in (the .so keeps it hidden).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "sys.h"
#include "json.h"
#include "state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <nettle/sha2.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The media types: docs/snapshot-format.md, "In a registry". */
#define MT_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_ARTIFACT "application/vnd.pagecache.snapshot.v1"
#define MT_CONFIG "application/vnd.pagecache.snapshot.config.v1+json"
#define MT_LAYER "application/vnd.pagecache.snapshot.v1"
#define MT_EMPTY "application/vnd.oci.empty.v1+json"	/* OCI 1.1's empty config (oras) */
#define ANN "vnd.pagecache.snapshot."			/* our annotations' prefix */

#define MANIFEST_MAX (4u << 20)		/* what registries accept, at most */
#define CONFIG_MAX (1u << 20)
#define DEFAULT_MAX_SIZE (1ull << 30)
#define DEFAULT_TIMEOUT 300		/* seconds, for the whole command */
#define ERR_TAIL 4096			/* of skopeo's stderr, passed on */

enum { OPT_MAXSIZE = 512, OPT_TIMEOUT };

/* What push's and pull's options set (the parser stores them all). */
struct oci_args {
	struct cli_opts co;
	const char *out;		/* pull -o */
	uint64_t max_size;
	double timeout;			/* seconds; 0: no limit */
};

/* both: one deadline for every run of skopeo (docs/security.md, "Registries") */
#define TIMEOUT_OPT                                                                    \
	{ .name = "timeout", .id = OPT_TIMEOUT, .arg = "SECONDS",                     \
	  CLI_SECONDS(struct oci_args, timeout), .lo = 0, .hi = 1e9, .range = CLI_BELOW_HI, \
	  .bad = "--timeout '%s': seconds, 0 or more (0: no limit; 1.5 is a second and a half)", \
	  .help = "give up after SECONDS (default 300; 0: no limit)" }

static const struct cli_opt fmt_opts[] = {
	{ .name = "json", .letter = 'J', .id = OPT_JSON, .arg = "STYLE", .comp = CC_WORDS,
	  .words = "pretty short", .bind = CB_FORMAT,
	  .help = "JSON on stdout, errors too; STYLE: pretty or short", .flags = CLI_OPTARG },
	{ .name = "kv", .id = OPT_KV, .bind = CB_FORMAT, .help = "key=value lines" },
	{ .name = "bytes", .id = OPT_BYTES, .bind = CB_FORMAT,
	  .help = "exact bytes instead of 1.5G" },
	{ 0 }
};
static const struct cli_group fmt_group = { "Output", fmt_opts };

static const struct cli_opt push_opts[] = {
	TIMEOUT_OPT,
	{ 0 }
};

#define REF_HELP                                                                       \
	"REF names the registry, the repository and a tag:\n"                          \
	"registry.example/team/db-cache:v42 (a registry is always named: team/db\n"  \
	"alone is refused, docker.io/team/db is Docker Hub).\n"                        \
	"\n"                                                                           \
	"skopeo does the talking (Debian: apt install skopeo); log in with\n"          \
	"'skopeo login REGISTRY' (or podman's, or docker's): pagecache passes on\n"    \
	"REGISTRY_AUTH_FILE, XDG_RUNTIME_DIR, HOME and DOCKER_CONFIG, the proxy\n"     \
	"variables and nothing else. TLS is required, whatever registries.conf says,\n" \
	"except for a registry on this host (localhost, 127.0.0.1, [::1]), which\n"   \
	"may answer in plain HTTP. A registry with its own CA: put the CA in\n"        \
	"/etc/containers/certs.d/HOST:PORT/ca.crt.\n"                                  \
	"\n"

const struct cli_spec push_spec = {
	.name = "push",
	.usage =
	"Usage: pagecache push [OPTIONS] SNAPSHOT REF\n"
	"\n"
	"Put a snapshot (pagecache snapshot -o SNAPSHOT) into an OCI registry, as\n"
	"an artifact of one layer: the snapshot file as it is, of media type\n"
	MT_LAYER ", annotated with where and when\n"
	"it was taken and what it holds (host, root, created; files, pages,\n"
	"bytes). The snapshot is read whole first: a corrupt one is not pushed.\n"
	"\n" REF_HELP,
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache snapshot -o db.snap /var/lib/mysql\n"
	"  pagecache push db.snap registry.example/team/db-cache:v42\n"
	"On the new replica:\n"
	"  pagecache pull registry.example/team/db-cache:v42 -o db.snap\n"
	"  pagecache restore --root /mnt/replica db.snap\n"
	"Exit status: 0 pushed, 1 not pushed (said why), 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", push_opts }, &fmt_group },
	.operands = CC_FILE,
};

static const struct cli_opt pull_opts[] = {
	{ .name = "output", .letter = 'o', .id = 'o', .arg = "FILE", .comp = CC_FILE,
	  CLI_STRING(struct oci_args, out), .help = "the snapshot to write (required), atomically" },
	{ .name = "max-size", .id = OPT_MAXSIZE, .arg = "SIZE", .comp = CC_SIZE,
	  CLI_SIZE(struct oci_args, max_size), .lo = 1,
	  .bad = "--max-size wants a size above 0 (64M, 1G), not '%s'",
	  .help = "refuse a snapshot larger than SIZE (default 1G)" },
	TIMEOUT_OPT,
	{ 0 }
};

const struct cli_spec pull_spec = {
	.name = "pull",
	.usage =
	"Usage: pagecache pull [OPTIONS] REF -o FILE\n"
	"\n"
	"Fetch a snapshot that pagecache push put into an OCI registry, check it,\n"
	"and write it to FILE. Its manifest is read first: anything but a\n"
	"pagecache snapshot (a container image, another artifact) is refused,\n"
	"naming what it is, and so is a snapshot larger than --max-size, before\n"
	"it is fetched. The layer must have the manifest's size and digest and be\n"
	"a whole, valid snapshot; only then does it replace FILE (a temporary file\n"
	"beside it, renamed): a failure leaves the old FILE as it was. FILE may\n"
	"not be a symbolic link, a FIFO or a device.\n"
	"\n" REF_HELP,
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache pull registry.example/team/db-cache:v42 -o /var/tmp/db.snap\n"
	"  pagecache restore --root /mnt/replica /var/tmp/db.snap\n"
	"  pagecache pull --json registry.example/team/db-cache@sha256:... -o db.snap\n"
	"Exit status: 0 written, 1 not written (said why), 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", pull_opts }, &fmt_group },
	.operands = CC_NONE,
};

/* ---- interruption: the private directory and a temporary FILE go too ---- */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART: waits end */

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* After cleaning up: die of the signal that stopped us, as if uncaught. */
static void reraise(void)
{
	if (got_signal) {
		signal(got_signal, SIG_DFL);
		raise(got_signal);
	}
}

/* ---- REF ---- */

struct oref {
	char name[512];		/* registry/path, without tag or digest */
	char host[256];		/* the registry, with its port */
	char tag[129];		/* "" if none */
	char digest[72];	/* "sha256:HEX" if given, else "" */
	bool local;		/* on this host: plain HTTP allowed */
};

static bool is_hex64(const char *s)
{
	if (strlen(s) != 64)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/*
 * The docker reference grammar, loosely: what skopeo would take, and the
 * parts we need (the host for the TLS rule, the name for a pull by
 * digest). 0, or -1 with why[].
 */
static int ref_parse(const char *ref, struct oref *r, char *why, size_t wlen)
{
	const char *slash, *at, *colon, *hostend;
	size_t n = strlen(ref);
	char host[256];

	memset(r, 0, sizeof(*r));
	if (!n || n >= sizeof(r->name)) {
		snprintf(why, wlen, "%s", n ? "too long" : "empty");
		return -1;
	}
	for (const char *c = ref; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      strchr("._-/:@[]", *c))) {
			snprintf(why, wlen, "a reference holds letters, digits and . _ - / : @ only");
			return -1;
		}
	slash = strchr(ref, '/');
	if (!slash || slash == ref || !slash[1]) {
		snprintf(why, wlen, "no registry named: write it first "
			 "(registry.example/team/db:v1; docker.io/... for Docker Hub)");
		return -1;
	}
	if ((size_t)(slash - ref) >= sizeof(host)) {
		snprintf(why, wlen, "the registry's name is too long");
		return -1;
	}
	memcpy(host, ref, (size_t)(slash - ref));
	host[slash - ref] = 0;
	/* a first component that is no host name would be taken for Docker Hub's */
	if (!strchr(host, '.') && !strchr(host, ':') && strcmp(host, "localhost") && host[0] != '[') {
		snprintf(why, wlen, "'%s' is no registry (it has no '.' or ':'): name the registry "
			 "first (docker.io/%s for Docker Hub)", host, ref);
		return -1;
	}
	snprintf(r->host, sizeof(r->host), "%s", host);
	/* the host without its port: [::1]:5000, 127.0.0.1:5000, localhost */
	if (host[0] == '[') {
		char *e = strchr(host, ']');

		if (!e || (e[1] && e[1] != ':')) {
			snprintf(why, wlen, "a bad IPv6 registry address");
			return -1;
		}
		e[1] = 0;
	} else if ((hostend = strchr(host, ':'))) {
		host[hostend - host] = 0;
	}
	r->local = !strcmp(host, "localhost") || !strcmp(host, "127.0.0.1") || !strcmp(host, "[::1]");

	at = strchr(slash, '@');
	if (at) {
		if (strncmp(at + 1, "sha256:", 7) || !is_hex64(at + 8)) {
			snprintf(why, wlen, "a digest is @sha256: and 64 lowercase hex digits");
			return -1;
		}
		snprintf(r->digest, sizeof(r->digest), "%s", at + 1);
		n = (size_t)(at - ref);
	}
	memcpy(r->name, ref, n);
	r->name[n] = 0;
	colon = strrchr(r->name, ':');
	if (colon && colon > r->name + (slash - ref)) {
		size_t tl = strlen(colon + 1);

		if (!tl || tl >= sizeof(r->tag) || strchr(colon + 1, '/')) {
			snprintf(why, wlen, "a bad tag (1 to 128 characters)");
			return -1;
		}
		memcpy(r->tag, colon + 1, tl + 1);
		r->name[colon - r->name] = 0;
	}
	if (strlen(r->name) <= (size_t)(slash - ref) + 1 || strchr(r->name + (slash - ref), '[') ||
	    strchr(r->name + (slash - ref), ']')) {
		snprintf(why, wlen, "no repository after the registry");
		return -1;
	}
	return 0;
}

/* ---- skopeo: found, run, heard ---- */

/*
 * Root must not run what others can replace: the file and every directory
 * above it (after links) are root's or the caller's, none writable by
 * others (a directory may be, if sticky, like /var/tmp: the file in it is
 * still ours). 0, or -errno with why[].
 */
static int trusted_exe(const char *path, char *real, size_t rlen, char *why, size_t wlen)
{
	char buf[PATH_MAX], *slash;
	uid_t me = geteuid();
	struct stat st;

	if (!realpath(path, buf))
		return -errno;
	if (stat(buf, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR)) {
		snprintf(why, wlen, "'%s' is not an executable file", buf);
		return -EACCES;
	}
	if ((st.st_uid != 0 && st.st_uid != me) || (st.st_mode & 022)) {
		snprintf(why, wlen, "'%s' is owned by uid %u, mode %04o: others could replace it",
			 buf, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	snprintf(real, rlen, "%s", buf);
	while ((slash = strrchr(buf, '/'))) {
		slash[slash == buf ? 1 : 0] = 0;
		if (stat(buf, &st) < 0)
			return -errno;
		if ((st.st_uid != 0 && st.st_uid != me) ||
		    ((st.st_mode & 002) && !(st.st_mode & S_ISVTX)) || (st.st_mode & 020 && st.st_gid != 0)) {
			snprintf(why, wlen, "'%s', above '%s', may be changed by others (uid %u, mode %04o)",
				 buf, real, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
			return -EPERM;
		}
		if (!strcmp(buf, "/"))
			break;
	}
	return 0;
}

/*
 * skopeo's absolute path: in the system's directories, never $PATH's
 * (which others may write to). PAGECACHE_SKOPEO is for the tests (a fake
 * that shows the command line it got); it must pass the same checks.
 */
static int find_skopeo(char *path, size_t len)
{
	static const char *const dirs[] = { "/usr/bin", "/usr/local/bin", "/bin", "/usr/sbin",
					    "/usr/local/sbin", "/sbin" };
	/* never where the kernel marked this run secure (file capabilities) */
	const char *env = secure_getenv("PAGECACHE_SKOPEO");
	char cand[PATH_MAX], why[PATH_MAX + 128] = "";
	int rc;

	if (env && *env) {
		rc = trusted_exe(env, path, len, why, sizeof(why));
		if (rc < 0) {
			cli_warn("not running PAGECACHE_SKOPEO '%s': %s", env, why[0] ? why : strerror(-rc));
			return -1;
		}
		return 0;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(cand, sizeof(cand), "%s/skopeo", dirs[i]);
		why[0] = 0;
		rc = trusted_exe(cand, path, len, why, sizeof(why));
		if (rc == 0)
			return 0;
		if (rc != -ENOENT) {
			cli_warn("not running '%s': %s", cand, why[0] ? why : strerror(-rc));
			return -1;
		}
	}
	cli_warn("pagecache %s needs skopeo (Debian: apt install skopeo), which is in none of "
		 "/usr/bin, /usr/local/bin, /bin, /usr/sbin, /usr/local/sbin, /sbin", cli_cmd);
	return -1;
}

struct oci {
	char skopeo[PATH_MAX];
	char dirpath[PATH_MAX + 80];	/* the private directory */
	int dirfd;
	uint64_t fsize;		/* RLIMIT_FSIZE for skopeo; 0: none */
	double deadline;	/* pc_now() by which every run of skopeo ends; 0: none */
	double timeout;		/* --timeout, for the error that names it */
	char err_tail[ERR_TAIL + 1];	/* what skopeo said last on stderr */
};

static const char *const env_keep[] = {
	"REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR", "HOME", "DOCKER_CONFIG",
	"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
};

/*
 * Wait until skopeo (pid, leader of a process group of its own) has ended
 * and its stdout (fd, -1 if none; closed here) is at EOF, appended to *buf
 * (at most max bytes: more is -EFBIG); never past o->deadline. 0, or
 * -ETIMEDOUT, -EINTR (a signal came), -EFBIG, -ENOMEM, -errno. Its exit is
 * seen through a pidfd (or every 100 ms where there is none) and left
 * unreaped (WNOWAIT), so that its pid still names its group when the
 * caller kills what is left.
 */
static int skopeo_wait(const struct oci *o, pid_t pid, int fd, char **buf, size_t *len,
		       size_t *cap, size_t max)
{
	int pidfd = (int)syscall(__NR_pidfd_open, pid, 0), rc = 0;
	bool ended = false;
	double drained = 0;	/* once it ended: what is left of its stdout is read by then */
	sigset_t block, orig;

	/* the signals that end us are let in only inside ppoll: none is missed */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &orig);
	while (!ended || fd >= 0) {
		struct pollfd pf[2];
		struct timespec ts;
		int np = 0, ms = pidfd >= 0 || ended ? -1 : 100;
		double left = o->deadline ? o->deadline - pc_now() : 0;

		if (got_signal) {
			rc = -EINTR;
			break;
		}
		if (ended && (pc_now() >= drained || (o->deadline && left <= 0)))
			break;	/* a process out of its group (setsid) holds its stdout: not waited
				 * for; a deadline passed now is the next step's to say */
		if (o->deadline && left <= 0) {
			rc = -ETIMEDOUT;
			break;
		}
		if (o->deadline && (ms < 0 || left * 1000 + 1 < ms))
			ms = left * 1000 + 1 > 3600000 ? 3600000 : (int)(left * 1000) + 1;
		if (ended && (ms < 0 || (drained - pc_now()) * 1000 + 1 < ms))
			ms = (int)((drained - pc_now()) * 1000) + 1;
		ts = (struct timespec){ ms / 1000, (long)(ms % 1000) * 1000000 };
		if (fd >= 0)
			pf[np++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (!ended && pidfd >= 0)
			pf[np++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		if (ppoll(pf, (nfds_t)np, ms < 0 ? NULL : &ts, &orig) < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		if (fd >= 0 && pf[0].revents) {
			ssize_t r;

			if (*len == *cap) {
				size_t nc = *cap ? *cap * 2 : 65536;
				char *nb = nc > max + 1 ? NULL : realloc(*buf, nc + 1);

				if (!nb) {
					rc = nc > max + 1 ? -EFBIG : -ENOMEM;
					break;
				}
				*buf = nb;
				*cap = nc;
			}
			r = read(fd, *buf + *len, *cap - *len);
			if (r < 0 && errno != EINTR && errno != EAGAIN) {
				rc = -errno;
				break;
			}
			if (r == 0) {
				close(fd);
				fd = -1;
			} else if (r > 0 && (*len += (size_t)r) > max) {
				rc = -EFBIG;
				break;
			}
		}
		if (!ended) {
			siginfo_t si = { 0 };

			if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    si.si_pid == pid) {
				ended = true;
				drained = pc_now() + 1;
				/* what it left running holds its stdout open: gone too */
				kill(-pid, SIGKILL);
			}
		}
	}
	sigprocmask(SIG_SETMASK, &orig, NULL);
	if (fd >= 0)
		close(fd);
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}

/*
 * Run skopeo with args (NULL-terminated), stdin /dev/null, stderr into
 * the private directory (its tail kept in o->err_tail), in a process group
 * of its own. With out: stdout read into a malloc'd buffer of at most max
 * bytes (more: -EFBIG). With o->deadline, skopeo is told the time left
 * (--command-timeout) and, at the deadline, its process group is killed and
 * it is reaped: -ETIMEDOUT. Returns its exit status (>= 0, 128+N for
 * signal N) or -errno (-EINTR: a signal came).
 */
static int run_skopeo(struct oci *o, const char *const *args, char **out, size_t *outlen,
		      size_t max)
{
	const char *argv[24];
	char *envp[sizeof(env_keep) / sizeof(env_keep[0]) + 3], tmpenv[sizeof(o->dirpath) + 8],
	     left[32];
	int pfd[2] = { -1, -1 }, efd = -1, st, n = 0, ne = 0, rc = 0;
	size_t len = 0, cap = 0;
	char *buf = NULL;
	pid_t pid;

	argv[n++] = o->skopeo;
	argv[n++] = args[0];	/* the subcommand; its global options may follow */
	if (o->deadline) {
		double l = o->deadline - pc_now();

		if (l <= 0)
			return -ETIMEDOUT;
		/* its own limit, whole seconds up: ours comes first, and kills */
		snprintf(left, sizeof(left), "%.0fs", ceil(l));
		argv[n++] = "--command-timeout";
		argv[n++] = left;
	}
	for (int i = 1; args[i] && n < (int)(sizeof(argv) / sizeof(argv[0])) - 1; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	for (size_t i = 0; i < sizeof(env_keep) / sizeof(env_keep[0]); i++) {
		const char *v = getenv(env_keep[i]);

		if (v && asprintf(&envp[ne], "%s=%s", env_keep[i], v) >= 0)
			ne++;
	}
	/* credential helpers (docker-credential-*) from the system's directories only */
	envp[ne++] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	snprintf(tmpenv, sizeof(tmpenv), "TMPDIR=%s", o->dirpath);	/* its temp files: ours */
	envp[ne++] = tmpenv;
	envp[ne] = NULL;

	unlinkat(o->dirfd, "skopeo.err", 0);
	efd = bench_file_create(o->dirfd, "skopeo.err", O_RDWR, 0600);
	if (efd < 0) {
		rc = efd;
		goto out;
	}
	if (out && pipe2(pfd, O_CLOEXEC) < 0) {
		rc = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		goto out;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

		setpgid(0, 0);	/* what it starts (credential helpers) is killed with it */
		bench_exec_prep();
		if (o->fsize) {
			struct rlimit rl = { o->fsize, o->fsize };

			setrlimit(RLIMIT_FSIZE, &rl);
		}
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(out ? pfd[1] : nul, 1) < 0 || dup2(efd, 2) < 0)
			_exit(127);
		execve(o->skopeo, (char *const *)argv, envp);
		dprintf(2, "cannot run '%s': %s\n", o->skopeo, strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);	/* both sides: the group exists before either goes on */
	if (pfd[1] >= 0) {
		close(pfd[1]);
		pfd[1] = -1;
	}
	rc = skopeo_wait(o, pid, pfd[0], &buf, &len, &cap, max);
	pfd[0] = -1;	/* closed there */
	/* the group, whatever is left of it (all of it, if stopped), then skopeo itself */
	kill(-pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			rc = rc ? rc : -errno;
			st = 0;
			break;
		}
	}
	if (!rc)
		rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	{	/* the tail of what it said */
		off_t end = lseek(efd, 0, SEEK_END);
		off_t from = end > ERR_TAIL ? end - ERR_TAIL : 0;
		ssize_t r = end > 0 ? pread(efd, o->err_tail, (size_t)(end - from), from) : 0;

		o->err_tail[r > 0 ? r : 0] = 0;
		while (r > 0 && (o->err_tail[r - 1] == '\n' || o->err_tail[r - 1] == ' '))
			o->err_tail[--r] = 0;
	}
out:
	if (efd >= 0)
		close(efd);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	for (int i = 0; i < ne - 2; i++)
		free(envp[i]);
	if (out && rc == 0) {
		buf = buf ? buf : malloc(1);
		if (buf)
			buf[len] = 0;
		*out = buf;
		*outlen = len;
	} else {
		free(buf);
	}
	return rc;
}

/* The last line skopeo wrote (its error, usually), for the errors list. */
static const char *err_last(const struct oci *o)
{
	const char *nl = strrchr(o->err_tail, '\n');

	return o->err_tail[0] ? (nl ? nl + 1 : o->err_tail) : "(it said nothing)";
}

/* What skopeo's words mean, for the errors people meet most; NULL: say its own. */
static const char *err_meaning(const struct oci *o)
{
	static const struct { const char *said, *means; } known[] = {
		{ "manifest unknown", "the registry has no such tag or digest (manifest unknown)" },
		{ "name unknown", "the registry has no such repository (name unknown)" },
		{ "connection refused", "nothing answers at the registry's address (connection refused)" },
		{ "no such host", "the registry's name does not resolve (no such host)" },
		{ "server gave HTTP response to HTTPS client",
		  "the registry answered in plain HTTP; pagecache requires TLS for a registry that is "
		  "not on this host" },
		{ "certificate", "the registry's TLS certificate was refused (its CA goes in "
				 "/etc/containers/certs.d/HOST:PORT/ca.crt)" },
		{ "unauthorized", "the registry wants a login: skopeo login REGISTRY" },
		{ "authentication required", "the registry wants a login: skopeo login REGISTRY" },
		{ "denied", "the registry refused access (denied): skopeo login REGISTRY, or the "
			    "account lacks the right" },
		{ "did not match", "a blob's digest did not match: the registry sent other bytes than "
				   "its manifest names" },
		{ "file too large", "a file skopeo wrote grew past the limit (--max-size)" },
		{ "context deadline exceeded", "it ran out of time (--timeout)" },
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcasestr(o->err_tail, known[i].said))
			return known[i].means;
	return NULL;
}

/* The deadline passed in pagecache's own step (a copy, a check): said as skopeo's is. */
static void timed_out(const struct oci *o, const char *subject, const char *what, const char *step)
{
	char why[256];

	snprintf(why, sizeof(why), "timed out: %s had not finished when --timeout %g s ran out", step,
		 o->timeout);
	cli_fail_msg(subject, what, why);
}

/* "cannot pull 'REF': skopeo ... failed (exit 1): WHY", and what it said. */
static void skopeo_failed(const struct oci *o, const char *subject, const char *what,
			  const char *step, int rc)
{
	char why[ERR_TAIL + 512], *line, *save = NULL, tail[ERR_TAIL + 1];
	const char *means = rc > 0 ? err_meaning(o) : NULL;

	if (rc == -ETIMEDOUT)
		snprintf(why, sizeof(why), "timed out: skopeo %s had not finished when --timeout %g s "
			 "ran out (it was stopped)", step, o->timeout);
	else if (rc < 0)
		snprintf(why, sizeof(why), "skopeo %s: %s", step, strerror(-rc));
	else if (rc == 127 && !o->err_tail[0])
		snprintf(why, sizeof(why), "skopeo %s could not be run", step);
	else if (rc == 128 + SIGXFSZ)
		snprintf(why, sizeof(why), "skopeo %s was stopped: a file it wrote grew past the "
			 "limit (--max-size)", step);
	else
		snprintf(why, sizeof(why), "skopeo %s failed (%s %d): %s", step,
			 rc > 128 ? "signal" : "exit", rc > 128 ? rc - 128 : rc,
			 means ? means : err_last(o));
	cli_fail_msg(subject, what, why);
	/* its own words too, where ours replaced them or there are more lines */
	if ((rc > 0 || rc == -ETIMEDOUT) && o->err_tail[0] &&
	    (means || rc < 0 || strchr(o->err_tail, '\n'))) {
		cli_warn("skopeo said:");
		snprintf(tail, sizeof(tail), "%s", o->err_tail);
		for (line = strtok_r(tail, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			cli_warn("  %s", line);
	}
}

/* ---- the private directory ---- */

static void rm_tree_at(int dfd, int depth)
{
	DIR *d;
	struct dirent *e;
	int fd = dup(dfd);

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		int sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dfd, e->d_name, 0) == 0 || errno != EISDIR || depth > 16)
			continue;
		sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			rm_tree_at(sub, depth + 1);
			close(sub);
		}
		unlinkat(dfd, e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/*
 * A fresh directory, 0700, in $TMPDIR or /var/tmp (a disk: a snapshot may
 * be large), which must be one only root or the caller can change
 * (sticky, like /var/tmp, will do). 0, or -1 said.
 */
static int oci_dir(struct oci *o, const char *subject, const char *what)
{
	const char *parent = secure_getenv("TMPDIR");
	char why[256], ppath[PATH_MAX], name[64];
	int pfd;

	o->dirfd = -1;
	if (!parent || !*parent)
		parent = "/var/tmp";
	pfd = bench_workdir_open(parent, BENCH_WD_SHARED, ppath, sizeof(ppath), why, sizeof(why));
	if (pfd < 0) {
		char msg[PATH_MAX + 320];

		snprintf(msg, sizeof(msg), "no safe temporary directory: '%s': %s", parent, why);
		cli_fail_msg(subject, what, msg);
		return -1;
	}
	if (strchr(ppath, ':')) {	/* skopeo's oci:PATH:REF would split it */
		cli_fail_msg(subject, what, "the temporary directory's path holds ':' (set TMPDIR)");
		close(pfd);
		return -1;
	}
	o->dirfd = bench_workdir_fresh(pfd, "pagecache-oci-", name, sizeof(name));
	if (o->dirfd < 0) {
		cli_fail_msg(subject, what, strerror(-o->dirfd));
		close(pfd);
		o->dirfd = -1;
		return -1;
	}
	close(pfd);
	snprintf(o->dirpath, sizeof(o->dirpath), "%s/%s", ppath, name);
	return 0;
}

static void oci_dir_remove(struct oci *o)
{
	if (o->dirfd < 0)
		return;
	rm_tree_at(o->dirfd, 0);
	close(o->dirfd);
	o->dirfd = -1;
	rmdir(o->dirpath);
}

/* ---- digests ---- */

static void hex_digest(struct sha256_ctx *c, char out[72])
{
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256_digest(c, sizeof(d), d);
	memcpy(out, "sha256:", 7);
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", d[i]);
}

static void digest_of(const void *buf, size_t len, char out[72])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, len, buf);
	hex_digest(&c, out);
}

/* Write all of buf, or -errno. */
static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * Copy from in to out (both fds), hashing: exactly want bytes if want is
 * not UINT64_MAX (fewer or more is -EBADMSG), at most max, never past
 * deadline (a pc_now(); 0: none: -ETIMEDOUT). Its digest in ret_digest,
 * its size in ret_len.
 */
static int copy_hashed(int in, int out, uint64_t want, uint64_t max, double deadline,
		       char ret_digest[72], uint64_t *ret_len)
{
	static char buf[1 << 16];
	struct sha256_ctx c;
	uint64_t len = 0;
	int rc;

	sha256_init(&c);
	for (;;) {
		ssize_t r = read(in, buf, sizeof(buf));

		if (got_signal)
			return -EINTR;
		if (deadline && pc_now() >= deadline)
			return -ETIMEDOUT;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		len += (uint64_t)r;
		if (len > max)
			return -EFBIG;
		if (want != UINT64_MAX && len > want)
			return -EBADMSG;
		sha256_update(&c, (size_t)r, (const uint8_t *)buf);
		if ((rc = write_all(out, buf, (size_t)r)) < 0)
			return rc;
	}
	if (want != UINT64_MAX && len != want)
		return -EBADMSG;
	hex_digest(&c, ret_digest);
	*ret_len = len;
	return 0;
}

/* ---- what a snapshot holds (and that it is whole) ---- */

struct snapinfo {
	uint64_t files, pages, created;
	uint32_t page_size;
	char host[256], root[4096];
};

/* Read the snapshot at fd through and through; 0, or -1 with why[]. */
static int snap_read(int fd, struct snapinfo *si, char *why, size_t wlen)
{
	struct pc_profile_reader *r;
	struct pc_profile_file f;
	char path[32];
	int rc;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rc = pc_profile_open(path, &r, why, wlen);
	if (rc < 0)
		return -1;
	memset(si, 0, sizeof(*si));
	while ((rc = pc_profile_next(r, &f)) > 0) {
		si->files += !(f.ident & PC_IDENT_DIR);	/* a directory is not a file */
		for (size_t i = 0; i < f.nruns; i++)
			si->pages += f.runs[2 * i + 1];
		pc_profile_file_release(&f);
	}
	if (rc < 0) {
		snprintf(why, wlen, "%s", rc == -EBADMSG ? pc_profile_error(r) : strerror(-rc));
		pc_profile_close(r);
		return -1;
	}
	si->created = pc_profile_get_meta(r)->created;
	si->page_size = pc_profile_get_meta(r)->page_size;
	snprintf(si->host, sizeof(si->host), "%s", pc_profile_get_meta(r)->host);
	snprintf(si->root, sizeof(si->root), "%s", pc_profile_get_meta(r)->root);
	pc_profile_close(r);
	return 0;
}

/* RFC 3339, UTC; false for a time gmtime cannot take (the header is the writer's word) */
static bool rfc3339(uint64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	return t <= (uint64_t)INT32_MAX * 64 && gmtime_r(&tt, &tm) &&
	       strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0;
}

/* ---- option parsing, shared ---- */

/* 0: go on; 1: done (--help), exit 0; -1: usage error said. */
static int parse(int argc, char **argv, const struct cli_spec *spec, struct oci_args *a)
{
	struct cli_parser p;

	a->co = (struct cli_opts){ OUT_HUMAN };
	a->max_size = DEFAULT_MAX_SIZE;
	a->timeout = DEFAULT_TIMEOUT;
	cli_parser_bind_to(&p, spec, &(struct cli_bound){ .base = a, .co = &a->co }, argc, argv);
	if (cli_getopt_all(&p, argc, argv) == CLI_STOP)
		return p.exit ? -1 : 1;
	out_init(a->co.fmt, a->co.bytes, a->co.noheadings);
	out_list_declare("errors");
	return 0;
}

/* The record both print: what is in the registry. */
static void artifact_rec(const char *ref, const char *digest, uint64_t msize,
			 const char *layer_digest, uint64_t size, const char *file, bool plain)
{
	struct orec r = { 0 };

	orec_str(&r, "ref", ref, 0);
	orec_str(&r, "digest", digest, 0);
	orec_str(&r, "media_type", MT_MANIFEST, 0);
	orec_str(&r, "artifact_type", MT_ARTIFACT, 0);
	orec_u64(&r, "manifest_size", msize, OF_BYTES);
	orec_str(&r, "layer_media_type", MT_LAYER, 0);
	orec_str(&r, "layer_digest", layer_digest, 0);
	orec_u64(&r, "size", size, OF_BYTES);
	if (file)
		orec_str(&r, "file", file, 0);
	orec_bool(&r, "plain_http_allowed", plain);
	out_object("artifact", &r);
}

static void snapshot_rec(const struct snapinfo *si)
{
	struct orec r = { 0 };

	orec_str(&r, "host", si->host, 0);
	orec_str(&r, "root", si->root, 0);
	orec_u64(&r, "created", si->created, 0);
	orec_u64(&r, "page_size", si->page_size, OF_BYTES);
	orec_u64(&r, "files", si->files, 0);
	orec_u64(&r, "pages", si->pages, 0);
	orec_u64(&r, "bytes", si->pages * si->page_size, OF_BYTES);
	out_object("snapshot", &r);
}

static int finish(int rc)
{
	int frc = out_flush();

	reraise();
	return rc || frc < 0 || cli_failures() ? EXIT_PARTIAL : 0;
}

/* ---- push ---- */

/* s as a JSON string (the one escaper's), into f */
static void jstr(FILE *f, const char *s)
{
	out_json_str(f, s);
}

/* A blob into blobs/sha256/ of the layout at lfd; its digest in ret. */
static int put_blob(int lfd, const char *buf, size_t len, char ret[72])
{
	char name[80];
	int fd, rc;

	digest_of(buf, len, ret);
	snprintf(name, sizeof(name), "blobs/sha256/%s", ret + 7);
	fd = bench_file_create(lfd, name, O_WRONLY, 0600);
	if (fd < 0)
		return fd;
	rc = write_all(fd, buf, len);
	close(fd);
	return rc;
}

static int put_file(int lfd, const char *name, const char *text)
{
	int fd = bench_file_create(lfd, name, O_WRONLY, 0600), rc;

	if (fd < 0)
		return fd;
	rc = write_all(fd, text, strlen(text));
	close(fd);
	return rc;
}

/* A push under way: what it was told, what it has made. */
struct push {
	struct oci o;
	const char *snap, *refs;	/* SNAPSHOT and REF, as given */
	struct oref ref;
	struct snapinfo si;		/* what the snapshot holds */
	int in;				/* the snapshot */
	int lfd, bfd, tmpfd;		/* the layout, its blobs/sha256, the layer being made */
	char ldig[72], mdig[72];	/* the layer's digest, the manifest's */
	char pushed[72];		/* the manifest's, as the registry has it; "": not said */
	uint64_t size;			/* the layer's */
	size_t manlen;			/* the manifest's */
};

/* Every run of skopeo from here shares one deadline; a signal ends what waits. */
static void oci_start(struct oci *o, double timeout)
{
	catch_signals();
	o->timeout = timeout;	/* for the error that names it */
	o->deadline = timeout ? pc_now() + timeout : 0;
}

/* The layout: oci-layout, index.json, blobs/sha256/. 0, or -1 said. */
static int make_layout(struct push *p)
{
	if (mkdirat(p->o.dirfd, "layout", 0700) < 0 ||
	    (p->lfd = openat(p->o.dirfd, "layout",
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    mkdirat(p->lfd, "blobs", 0700) < 0 || mkdirat(p->lfd, "blobs/sha256", 0700) < 0 ||
	    (p->bfd = openat(p->lfd, "blobs/sha256",
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		cli_fail(p->snap, errno, "cannot make the OCI layout");
		return -1;
	}
	return 0;
}

/* The layer: a copy of the snapshot, hashed as it is copied, then read through. 0, or -1 said. */
static int put_layer(struct push *p)
{
	char why[512] = "";	/* pc_profile_open says nothing of ENOMEM */
	int rc;

	p->tmpfd = bench_file_create(p->bfd, "layer.tmp", O_RDWR, 0600);
	if (p->tmpfd < 0) {
		cli_fail(p->snap, -p->tmpfd, "cannot make the OCI layout");
		return -1;
	}
	rc = copy_hashed(p->in, p->tmpfd, UINT64_MAX, UINT64_MAX, p->o.deadline, p->ldig, &p->size);
	if (rc == -ETIMEDOUT) {
		timed_out(&p->o, p->snap, "cannot push", "its copy and check");
		return -1;
	}
	if (rc < 0) {
		cli_fail(p->snap, -rc, "cannot read");
		return -1;
	}
	if (snap_read(p->tmpfd, &p->si, why, sizeof(why)) < 0) {
		cli_fail_msg(p->snap, "not pushing", why[0] ? why : "not a valid snapshot");
		return -1;
	}
	if (renameat(p->bfd, "layer.tmp", p->bfd, p->ldig + 7) < 0) {
		cli_fail(p->snap, errno, "cannot make the OCI layout");
		return -1;
	}
	return 0;
}

/* The config: what the annotations say, as JSON (skopeo inspect --config shows it); NULL: ENOMEM */
static char *config_json(const struct snapinfo *si, size_t *ret_len)
{
	char *cfg = NULL;
	FILE *f = open_memstream(&cfg, ret_len);

	if (!f)
		return NULL;
	fprintf(f, "{\"host\":");
	jstr(f, si->host);
	fprintf(f, ",\"root\":");
	jstr(f, si->root);
	fprintf(f, ",\"created\":%llu,\"page_size\":%u,\"files\":%llu,\"pages\":%llu,\"bytes\":%llu}",
		(unsigned long long)si->created, si->page_size, (unsigned long long)si->files,
		(unsigned long long)si->pages, (unsigned long long)(si->pages * si->page_size));
	if (fclose(f) != 0) {
		free(cfg);
		return NULL;
	}
	return cfg;
}

/* The manifest, of the config (cdig, cfglen) and the layer; NULL: no memory. */
static char *manifest_json(const struct push *p, const char *cdig, size_t cfglen, size_t *ret_len)
{
	const struct snapinfo *si = &p->si;
	const char *title = strrchr(p->snap, '/') ? strrchr(p->snap, '/') + 1 : p->snap;
	char *man = NULL, when[64];
	FILE *f = open_memstream(&man, ret_len);

	if (!f)
		return NULL;
	fprintf(f, "{\"schemaVersion\":2,\"mediaType\":\"" MT_MANIFEST "\",\"artifactType\":\""
		   MT_ARTIFACT "\",\"config\":{\"mediaType\":\"" MT_CONFIG "\",\"digest\":\"%s\","
		   "\"size\":%zu},\"layers\":[{\"mediaType\":\"" MT_LAYER "\",\"digest\":\"%s\","
		   "\"size\":%llu,\"annotations\":{\"org.opencontainers.image.title\":",
		cdig, cfglen, p->ldig, (unsigned long long)p->size);
	jstr(f, title);
	fprintf(f, "}}],\"annotations\":{");
	if (rfc3339(si->created, when, sizeof(when)))
		fprintf(f, "\"org.opencontainers.image.created\":\"%s\",", when);
	fprintf(f, "\"" ANN "host\":");
	jstr(f, si->host);
	fprintf(f, ",\"" ANN "root\":");
	jstr(f, si->root);
	fprintf(f, ",\"" ANN "created\":\"%llu\",\"" ANN "page-size\":\"%u\",\"" ANN "files\":\"%llu\","
		   "\"" ANN "pages\":\"%llu\",\"" ANN "bytes\":\"%llu\"}}",
		(unsigned long long)si->created, si->page_size, (unsigned long long)si->files,
		(unsigned long long)si->pages, (unsigned long long)(si->pages * si->page_size));
	if (fclose(f) != 0) {
		free(man);
		return NULL;
	}
	return man;
}

/* The rest of the layout: the config and the manifest as blobs, the index. 0, or -1 said. */
static int put_manifest(struct push *p)
{
	char cdig[72], *cfg, *man = NULL, *idx = NULL;
	size_t cfglen = 0;
	int rc = -ENOMEM;

	cfg = config_json(&p->si, &cfglen);
	if (!cfg)
		goto out;
	rc = put_blob(p->lfd, cfg, cfglen, cdig);
	if (rc < 0)
		goto out;
	rc = -ENOMEM;
	man = manifest_json(p, cdig, cfglen, &p->manlen);
	if (!man)
		goto out;
	rc = put_blob(p->lfd, man, p->manlen, p->mdig);
	if (rc < 0)
		goto out;
	if (asprintf(&idx, "{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":\"" MT_MANIFEST
		     "\",\"artifactType\":\"" MT_ARTIFACT "\",\"digest\":\"%s\",\"size\":%zu}]}",
		     p->mdig, p->manlen) < 0) {
		idx = NULL;
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = put_file(p->lfd, "index.json", idx)) < 0 ||
	    (rc = put_file(p->lfd, "oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}")) < 0)
		goto out;
out:
	if (rc < 0)
		cli_fail(p->snap, -rc, "cannot make the OCI layout");
	free(cfg);
	free(man);
	free(idx);
	return rc < 0 ? -1 : 0;
}

/* skopeo copy: exactly these bytes (--preserve-digests), TLS unless on this host. 0, or -1 said. */
static int push_copy(struct push *p)
{
	char lay[PATH_MAX + 96], dst[600], digestfile[PATH_MAX + 96];
	const char *args[] = { "copy", "--quiet", "--preserve-digests", "--digestfile",
			       digestfile, p->ref.local ? "--dest-tls-verify=false"
							: "--dest-tls-verify=true",
			       lay, dst, NULL };
	int dfd, rc;
	ssize_t r;

	snprintf(lay, sizeof(lay), "oci:%s/layout", p->o.dirpath);
	snprintf(dst, sizeof(dst), "docker://%s", p->refs);
	snprintf(digestfile, sizeof(digestfile), "%s/digest", p->o.dirpath);
	rc = run_skopeo(&p->o, args, NULL, NULL, 0);
	if (got_signal)
		rc = rc ? rc : -EINTR;
	if (rc) {
		skopeo_failed(&p->o, p->refs, "cannot push", "copy", rc);
		return -1;
	}
	dfd = openat(p->o.dirfd, "digest", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	r = dfd >= 0 ? read(dfd, p->pushed, sizeof(p->pushed) - 1) : -1;
	p->pushed[r > 0 ? r : 0] = 0;
	p->pushed[strcspn(p->pushed, "\n")] = 0;
	if (dfd >= 0)
		close(dfd);
	/* --preserve-digests: the registry has our manifest, byte for byte */
	if (p->pushed[0] && strcmp(p->pushed, p->mdig))
		cli_warn("the registry holds '%s' as %s, not %s as written", p->refs, p->pushed,
			 p->mdig);
	return 0;
}

/* The manifest's annotations, as pushed. */
static void annotations_rec(const struct snapinfo *si)
{
	struct orec r = { 0 };
	char when[64], num[32];

	if (rfc3339(si->created, when, sizeof(when)))
		orec_str(&r, "org.opencontainers.image.created", when, 0);
	orec_str(&r, ANN "host", si->host, 0);
	orec_str(&r, ANN "root", si->root, 0);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)si->created);
	orec_str(&r, ANN "created", num, 0);
	snprintf(num, sizeof(num), "%u", si->page_size);
	orec_str(&r, ANN "page-size", num, 0);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)si->files);
	orec_str(&r, ANN "files", num, 0);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)si->pages);
	orec_str(&r, ANN "pages", num, 0);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)(si->pages * si->page_size));
	orec_str(&r, ANN "bytes", num, 0);
	out_object("annotations", &r);
}

/* What was pushed: every format's records, and two lines for people. */
static void push_report(const struct push *p, enum out_fmt fmt)
{
	const char *digest = p->pushed[0] ? p->pushed : p->mdig;

	artifact_rec(p->refs, digest, p->manlen, p->ldig, p->size, NULL, p->ref.local);
	annotations_rec(&p->si);
	snapshot_rec(&p->si);
	if (fmt == OUT_HUMAN) {
		char h1[32], h2[32];

		out_human_line("pushed '%s' to %s", p->snap, p->refs);
		out_human_line("  digest %s (%s; a snapshot of %s on %s: %llu files, %llu pages, %s)",
			       digest, fmt_size(p->size, h1, sizeof(h1)), p->si.root, p->si.host,
			       (unsigned long long)p->si.files, (unsigned long long)p->si.pages,
			       fmt_size(p->si.pages * p->si.page_size, h2, sizeof(h2)));
	}
}

static void push_release(struct push *p)
{
	if (p->in >= 0)
		close(p->in);
	if (p->tmpfd >= 0)
		close(p->tmpfd);
	if (p->bfd >= 0)
		close(p->bfd);
	if (p->lfd >= 0)
		close(p->lfd);
	oci_dir_remove(&p->o);
}

int cmd_push(int argc, char **argv)
{
	struct oci_args a = { 0 };
	struct push p = { .o = { .dirfd = -1 }, .in = -1, .lfd = -1, .bfd = -1, .tmpfd = -1 };
	struct stat st;
	char why[512];
	int rc;

	rc = parse(argc, argv, &push_spec, &a);
	if (rc)
		return rc > 0 ? 0 : EXIT_USAGE;
	if (argc - optind != 2)
		return cli_usage_error("want SNAPSHOT and REF (registry.example/team/db-cache:v42)");
	p.snap = argv[optind];
	p.refs = argv[optind + 1];
	if (ref_parse(p.refs, &p.ref, why, sizeof(why)) < 0)
		return cli_usage_error("bad REF '%s': %s", p.refs, why);
	if (p.ref.digest[0])
		return cli_usage_error("push names a tag, not a digest (the registry gives the digest): '%s'",
				       p.refs);
	oci_start(&p.o, a.timeout);
	if (find_skopeo(p.o.skopeo, sizeof(p.o.skopeo)) < 0) {
		cli_fail_msg(p.snap, "cannot push", "skopeo is missing or unsafe (said above)");
		return finish(1);
	}
	/* the user's file, but never a FIFO or a device */
	p.in = open(p.snap, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (p.in < 0) {
		cli_fail(p.snap, errno, "cannot open");
		return finish(1);
	}
	if (fstat(p.in, &st) < 0 || !S_ISREG(st.st_mode))
		cli_fail_msg(p.snap, "cannot push", "not a regular file");
	else if (oci_dir(&p.o, p.snap, "cannot push") == 0 && make_layout(&p) == 0 &&
		 put_layer(&p) == 0 && put_manifest(&p) == 0 && push_copy(&p) == 0)
		push_report(&p, a.co.fmt);
	push_release(&p);
	return finish(0);
}

/* ---- pull ---- */

/* The string member key of v, or NULL. */
static const char *jget_str(const struct pc_json *v, const char *key)
{
	return pc_json_string(pc_json_get(v, key), NULL);
}

/* A size in a descriptor: a whole number, 0 to 2^53. */
static bool jget_size(const struct pc_json *v, uint64_t *ret)
{
	double d = pc_json_number(pc_json_get(v, "size"), -1);

	if (!(d >= 0 && d <= 9007199254740992.0) || d != (double)(uint64_t)d)
		return false;
	*ret = (uint64_t)d;
	return true;
}

struct layer {
	char digest[72];
	uint64_t size;
};

/*
 * Is the manifest ours? 0 with the layer's descriptor, or -1 with why[]
 * naming what it is instead.
 */
static int manifest_check(const struct pc_json *m, uint64_t max_size, struct layer *ly, char *why,
			  size_t wlen)
{
	const char *mt = jget_str(m, "mediaType"), *at = jget_str(m, "artifactType");
	const struct pc_json *cfg = pc_json_get(m, "config"), *layers = pc_json_get(m, "layers"), *l;
	const char *cmt, *lmt, *ld;
	char hs[32], hm[32];
	uint64_t csize;

	if (pc_json_type(m) != PC_JSON_OBJECT) {
		snprintf(why, wlen, "its manifest is not a JSON object");
		return -1;
	}
	if (pc_json_get(m, "manifests")) {
		snprintf(why, wlen, "it is an image index (%s), not a pagecache snapshot",
			 mt ? mt : "no mediaType");
		return -1;
	}
	if (!mt || strcmp(mt, MT_MANIFEST)) {
		snprintf(why, wlen, "its manifest is %s, not a pagecache snapshot's (%s)",
			 mt ? mt : "of no mediaType", MT_MANIFEST);
		return -1;
	}
	if (pc_json_number(pc_json_get(m, "schemaVersion"), 0) != 2) {
		snprintf(why, wlen, "its manifest's schemaVersion is not 2");
		return -1;
	}
	cmt = jget_str(cfg, "mediaType");
	if (!cmt || !(strcmp(cmt, MT_CONFIG) == 0 || (strcmp(cmt, MT_EMPTY) == 0 && at &&
						     strcmp(at, MT_ARTIFACT) == 0))) {
		snprintf(why, wlen, "it is %s (config %s%s%s), not a pagecache snapshot (%s)",
			 cmt && (strstr(cmt, "image.config") || strstr(cmt, "container.image")) ?
				 "a container image" : "another artifact",
			 cmt ? cmt : "of no mediaType", at ? ", artifactType " : "", at ? at : "",
			 MT_ARTIFACT);
		return -1;
	}
	if (!jget_size(cfg, &csize) || csize > CONFIG_MAX) {
		snprintf(why, wlen, "its config's size is missing or above 1 MiB");
		return -1;
	}
	if (pc_json_type(layers) != PC_JSON_ARRAY || pc_json_count(layers) != 1) {
		snprintf(why, wlen, "it has %zu layers, not the one a snapshot has",
			 pc_json_count(layers));
		return -1;
	}
	l = pc_json_at(layers, 0);
	lmt = jget_str(l, "mediaType");
	if (!lmt || strcmp(lmt, MT_LAYER)) {
		snprintf(why, wlen, "its layer is %s, not a pagecache snapshot (%s)",
			 lmt ? lmt : "of no mediaType", MT_LAYER);
		return -1;
	}
	ld = jget_str(l, "digest");
	if (!ld || strncmp(ld, "sha256:", 7) || !is_hex64(ld + 7)) {
		snprintf(why, wlen, "its layer's digest is not sha256: and 64 lowercase hex digits");
		return -1;
	}
	if (!jget_size(l, &ly->size) || !ly->size) {
		snprintf(why, wlen, "its layer's size is missing or 0");
		return -1;
	}
	if (ly->size > max_size) {
		snprintf(why, wlen, "the snapshot is %s (%llu bytes), more than --max-size %s",
			 fmt_size(ly->size, hs, sizeof(hs)), (unsigned long long)ly->size,
			 fmt_size(max_size, hm, sizeof(hm)));
		return -1;
	}
	snprintf(ly->digest, sizeof(ly->digest), "%s", ld);
	return 0;
}

/*
 * -o FILE: its directory's fd and its name there; FILE must be absent or
 * a regular file, never a link (not written through) or a FIFO or device.
 */
static int out_target(const char *file, char *base, size_t blen, char *why, size_t wlen)
{
	const char *slash = strrchr(file, '/');
	char dir[PATH_MAX];
	struct stat st;
	int dfd;

	if (slash && !slash[1]) {
		snprintf(why, wlen, "a directory, not a file");
		return -EISDIR;
	}
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash == file ? 1 : slash - file), file);
	else
		snprintf(dir, sizeof(dir), ".");
	snprintf(base, blen, "%s", slash ? slash + 1 : file);
	if (!strcmp(base, ".") || !strcmp(base, "..")) {
		snprintf(why, wlen, "a directory, not a file");
		return -EISDIR;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(why, wlen, "its directory: %s", strerror(errno));
		return -errno;
	}
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		const char *what = S_ISLNK(st.st_mode) ? "a symbolic link (not written through)" :
				   S_ISFIFO(st.st_mode) ? "a FIFO" :
				   S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" :
				   S_ISDIR(st.st_mode) ? "a directory" :
				   !S_ISREG(st.st_mode) ? "not a regular file" : NULL;

		if (what) {
			snprintf(why, wlen, "it is %s", what);
			close(dfd);
			return -EEXIST;
		}
	} else if (errno != ENOENT) {
		snprintf(why, wlen, "%s", strerror(errno));
		close(dfd);
		return -errno;
	}
	return dfd;
}

/* A pull under way: what it was told, what it has fetched and checked. */
struct pull {
	struct oci o;
	const char *refs, *out;		/* REF and -o FILE, as given */
	uint64_t max_size;		/* --max-size */
	struct oref ref;
	struct pc_json *m;		/* the manifest, checked to be ours */
	char *raw;			/* its bytes, as checked */
	size_t rawlen;
	char mdig[72];			/* their digest */
	struct layer ly;		/* the layer, as the manifest describes it */
	struct snapinfo si;		/* what the snapshot holds */
	char base[256];			/* FILE's name in its directory */
	char *tmp;			/* the temporary file's name; NULL: none to remove */
	int dfd, tfd;			/* FILE's directory, the temporary file */
	int lfd, bfd;			/* the layout skopeo wrote, its blobs/sha256 */
};

static const struct pc_json_opts manifest_opts = { .max_bytes = MANIFEST_MAX };

/* 1. The manifest, alone: is it ours? 0, or -1 said. */
static int pull_manifest(struct pull *p)
{
	char src[600], why[PATH_MAX + 256];
	const char *args[] = { "inspect", "--raw", p->ref.local ? "--tls-verify=false"
							       : "--tls-verify=true", src, NULL };
	struct pc_json_error jerr;
	int rc;

	snprintf(src, sizeof(src), "docker://%s", p->refs);
	rc = run_skopeo(&p->o, args, &p->raw, &p->rawlen, MANIFEST_MAX);
	if (got_signal)
		rc = rc ? rc : -EINTR;
	if (rc) {
		if (rc == -EFBIG)
			cli_fail_msg(p->refs, "cannot pull", "its manifest is larger than 4 MiB");
		else
			skopeo_failed(&p->o, p->refs, "cannot pull", "inspect", rc);
		return -1;
	}
	digest_of(p->raw, p->rawlen, p->mdig);
	if (p->ref.digest[0] && strcmp(p->ref.digest, p->mdig)) {
		snprintf(why, sizeof(why), "the registry sent a manifest of digest %s", p->mdig);
		cli_fail_msg(p->refs, "cannot pull", why);
		return -1;
	}
	rc = pc_json_parse(p->raw, p->rawlen, &manifest_opts, &p->m, &jerr);
	if (rc < 0) {
		snprintf(why, sizeof(why), "its manifest is not JSON: %s",
			 rc == -EINVAL ? jerr.msg : strerror(-rc));
		cli_fail_msg(p->refs, "cannot pull", why);
		return -1;
	}
	if (manifest_check(p->m, p->max_size, &p->ly, why, sizeof(why)) < 0) {
		cli_fail_msg(p->refs, "not pulling", why);
		return -1;
	}
	return 0;
}

/* 2. Exactly that manifest and its blobs, by digest; no file of skopeo's larger than allowed. */
static int pull_copy(struct pull *p)
{
	char src[600], lay[PATH_MAX + 96];
	const char *args[] = { "copy", "--quiet", "--preserve-digests",
			       p->ref.local ? "--src-tls-verify=false" : "--src-tls-verify=true",
			       src, lay, NULL };
	int rc;

	snprintf(src, sizeof(src), "docker://%s@%s", p->ref.name, p->mdig);
	snprintf(lay, sizeof(lay), "oci:%s/layout", p->o.dirpath);
	p->o.fsize = (p->ly.size > MANIFEST_MAX ? p->ly.size : MANIFEST_MAX) + 65536;
	rc = run_skopeo(&p->o, args, NULL, NULL, 0);
	if (got_signal)
		rc = rc ? rc : -EINTR;
	if (rc) {
		skopeo_failed(&p->o, p->refs, "cannot pull", "copy", rc);
		return -1;
	}
	return 0;
}

/* 3. The layout as written: its manifest is the one checked. 0, or -1 said. */
static int check_layout(struct pull *p)
{
	char ipath[PATH_MAX + 112], *raw2;
	struct pc_json *index = NULL;
	struct pc_json_error jerr;
	const struct pc_json *d;
	ssize_t r = -1;
	int rc, mfd;

	p->lfd = openat(p->o.dirfd, "layout", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	p->bfd = p->lfd < 0 ? -1 : openat(p->lfd, "blobs/sha256",
					  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (p->bfd < 0) {
		cli_fail_msg(p->refs, "cannot pull", "skopeo wrote no OCI layout");
		return -1;
	}
	snprintf(ipath, sizeof(ipath), "%s/layout/index.json", p->o.dirpath);
	rc = pc_json_parse_file(ipath, &manifest_opts, &index, &jerr);
	d = pc_json_at(pc_json_get(index, "manifests"), 0);
	if (rc < 0 || pc_json_count(pc_json_get(index, "manifests")) != 1 ||
	    !jget_str(d, "digest") || strcmp(jget_str(d, "digest"), p->mdig)) {
		cli_fail_msg(p->refs, "cannot pull", "the layout skopeo wrote does not hold the "
			     "manifest that was checked");
		pc_json_free(index);
		return -1;
	}
	pc_json_free(index);
	mfd = openat(p->bfd, p->mdig + 7, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	raw2 = malloc(p->rawlen + 1);
	if (mfd >= 0 && raw2)
		r = pread(mfd, raw2, p->rawlen + 1, 0);
	if (mfd >= 0)
		close(mfd);
	if (r != (ssize_t)p->rawlen || memcmp(p->raw, raw2, p->rawlen)) {
		cli_fail_msg(p->refs, "cannot pull",
			     "the manifest skopeo wrote is not the one checked");
		free(raw2);
		return -1;
	}
	free(raw2);
	return 0;
}

/* 4. The layer, copied beside FILE as it is hashed: its size and digest the manifest's. */
static int pull_layer(struct pull *p)
{
	char why[PATH_MAX + 256], got[72];
	int in = openat(p->bfd, p->ly.digest + 7, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	uint64_t len;
	int rc;

	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		cli_fail_msg(p->refs, "cannot pull", "skopeo wrote no layer");
		if (in >= 0)
			close(in);
		return -1;
	}
	p->tfd = pc_sys_tmp_create(p->dfd, p->base, true, &p->tmp);
	if (p->tfd < 0) {
		cli_fail(p->out, -p->tfd, "cannot write");
		close(in);
		return -1;
	}
	rc = copy_hashed(in, p->tfd, p->ly.size, p->max_size, p->o.deadline, got, &len);
	close(in);
	if (rc == -ETIMEDOUT) {
		timed_out(&p->o, p->refs, "cannot pull", "the layer's check");
		return -1;
	}
	if (rc == -EBADMSG) {
		snprintf(why, sizeof(why), "its layer is not of the %llu bytes its manifest says",
			 (unsigned long long)p->ly.size);
		cli_fail_msg(p->refs, "not pulling", why);
		return -1;
	}
	if (rc < 0) {
		cli_fail(p->out, -rc, "cannot write");
		return -1;
	}
	if (strcmp(got, p->ly.digest)) {
		snprintf(why, sizeof(why), "its layer's digest is %s, not %s as its manifest says",
			 got, p->ly.digest);
		cli_fail_msg(p->refs, "not pulling", why);
		return -1;
	}
	return 0;
}

/*
 * The copy read through: a whole, valid snapshot. Then 5. in place:
 * fsync'ed, renamed, the directory fsync'ed; not once interrupted. 0, or -1 said.
 */
static int put_in_place(struct pull *p)
{
	char why[PATH_MAX + 256] = "";

	if (snap_read(p->tfd, &p->si, why, sizeof(why)) < 0) {
		char msg[sizeof(why) + 64];

		snprintf(msg, sizeof(msg), "not a valid pagecache snapshot: %s",
			 why[0] ? why : "unreadable");
		cli_fail_msg(p->refs, "not pulling", msg);
		return -1;
	}
	if (got_signal) {
		cli_fail_msg(p->refs, "not pulling", "interrupted");
		return -1;
	}
	if (p->o.deadline && pc_now() >= p->o.deadline) {
		timed_out(&p->o, p->refs, "cannot pull", "the snapshot's check");
		return -1;
	}
	if (fsync(p->tfd) < 0 || renameat(p->dfd, p->tmp, p->dfd, p->base) < 0) {
		cli_fail(p->out, errno, "cannot write");
		return -1;
	}
	free(p->tmp);
	p->tmp = NULL;	/* it is FILE now */
	fsync(p->dfd);
	return 0;
}

/* The manifest's annotations, as the registry gave them. */
static void pulled_annotations_rec(const struct pc_json *m)
{
	const struct pc_json *ann = pc_json_get(m, "annotations");
	/* a record keeps its keys by pointer, and m is freed before the output */
	static char keys[64][128];
	struct orec r = { 0 };

	for (size_t i = 0; i < pc_json_count(ann) && i < 64; i++) {
		const char *k = pc_json_key_at(ann, i, NULL), *v = pc_json_string(pc_json_at(ann, i), NULL);

		if (k && v && strlen(k) < sizeof(keys[i])) {
			snprintf(keys[i], sizeof(keys[i]), "%s", k);
			orec_str(&r, keys[i], v, 0);
		}
	}
	out_object("annotations", &r);
}

/* What was pulled: every format's records, and two lines for people. */
static void pull_report(const struct pull *p, enum out_fmt fmt)
{
	artifact_rec(p->refs, p->mdig, p->rawlen, p->ly.digest, p->ly.size, p->out, p->ref.local);
	pulled_annotations_rec(p->m);
	snapshot_rec(&p->si);
	if (fmt == OUT_HUMAN) {
		char h1[32], when[64];

		if (!rfc3339(p->si.created, when, sizeof(when)))
			snprintf(when, sizeof(when), "an impossible time (%llu)",
				 (unsigned long long)p->si.created);
		out_human_line("pulled %s (%s) to '%s'", p->refs, p->mdig, p->out);
		out_human_line("  a snapshot of %s on %s, %s: %llu files, %llu pages (%s)",
			       p->si.root, p->si.host, when, (unsigned long long)p->si.files,
			       (unsigned long long)p->si.pages,
			       fmt_size(p->si.pages * p->si.page_size, h1, sizeof(h1)));
	}
}

/* What is left of a pull: a temporary FILE (never placed) too. */
static void pull_release(struct pull *p)
{
	if (p->tfd >= 0)
		close(p->tfd);
	if (p->tmp && p->dfd >= 0)
		unlinkat(p->dfd, p->tmp, 0);
	free(p->tmp);
	if (p->dfd >= 0)
		close(p->dfd);
	if (p->bfd >= 0)
		close(p->bfd);
	if (p->lfd >= 0)
		close(p->lfd);
	oci_dir_remove(&p->o);
	pc_json_free(p->m);
	free(p->raw);
}

int cmd_pull(int argc, char **argv)
{
	struct oci_args a = { 0 };
	struct pull p = { .o = { .dirfd = -1 }, .dfd = -1, .tfd = -1, .lfd = -1, .bfd = -1 };
	char why[PATH_MAX + 256];
	bool written = false;
	int rc;

	rc = parse(argc, argv, &pull_spec, &a);
	if (rc)
		return rc > 0 ? 0 : EXIT_USAGE;
	if (argc - optind != 1)
		return cli_usage_error("want one REF (registry.example/team/db-cache:v42) and -o FILE");
	if (!a.out)
		return cli_usage_error("-o FILE is required: where the snapshot goes");
	p.refs = argv[optind];
	p.out = a.out;
	p.max_size = a.max_size;
	if (ref_parse(p.refs, &p.ref, why, sizeof(why)) < 0)
		return cli_usage_error("bad REF '%s': %s", p.refs, why);
	oci_start(&p.o, a.timeout);
	p.dfd = out_target(p.out, p.base, sizeof(p.base), why, sizeof(why));
	if (p.dfd < 0) {
		cli_fail_msg(p.out, "not writing", why);
		return finish(1);
	}
	if (find_skopeo(p.o.skopeo, sizeof(p.o.skopeo)) < 0)
		cli_fail_msg(p.refs, "cannot pull", "skopeo is missing or unsafe (said above)");
	else if (oci_dir(&p.o, p.refs, "cannot pull") == 0 && pull_manifest(&p) == 0 &&
		 pull_copy(&p) == 0 && check_layout(&p) == 0 && pull_layer(&p) == 0 &&
		 put_in_place(&p) == 0) {
		written = true;
		pull_report(&p, a.co.fmt);
	}
	pull_release(&p);
	return finish(written ? 0 : 1);
}
