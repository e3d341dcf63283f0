/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup.c: memory.stat of v1 and v2 read into one shape (from recorded
 * files, so v2 is tested on a v1 machine); what v2 takes to make a child
 * beneath the caller (decided from a cgroup's files, here a made-up one in
 * a temporary directory: the v2 memory controller cannot be had on a host
 * whose v1 hierarchy holds it); the live hierarchy found, and as root a
 * child made beneath ours, and one with a process in it removed; a cgroup
 * named as users name it (directory, path, unit name, container ID),
 * resolved in a made-up hierarchy of v1 and v2 shape, and on the live one.
 */
#include "pagecache.h"
#include "tap.h"

#include <limits.h>
#include <signal.h>
#include <sys/statfs.h>
#include <sys/wait.h>

static char fake[64];

/* A made-up v2 cgroup: name, and its files (NULL: absent). */
static const char *fake_cg(const char *name, const char *controllers, const char *subtree,
			   const char *type, const char *procs)
{
	static char dir[128];
	const char *files[][2] = { { "cgroup.controllers", controllers },
				   { "cgroup.subtree_control", subtree },
				   { "cgroup.type", type },
				   { "cgroup.procs", procs } };

	snprintf(dir, sizeof(dir), "%s/%s", fake, name);
	mkdir(dir, 0755);
	for (size_t i = 0; i < 4; i++) {
		char path[256];
		FILE *f;

		if (!files[i][1])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
		f = fopen(path, "w");
		fputs(files[i][1], f);
		fclose(f);
	}
	return dir;
}

static int plan(const char *name, const char *controllers, const char *subtree, const char *type,
		const char *procs, struct pc_cgroup_plan *p)
{
	memset(p, 0xff, sizeof(*p));
	return pc_cgroup_plan_v2(fake_cg(name, controllers, subtree, type, procs), "memory",
				 getpid(), p);
}

static void test_plan_v2(void)
{
	struct pc_cgroup_plan p;
	char me[32], me_and[64];
	int rc;

	snprintf(fake, sizeof(fake), "/tmp/pc-test-cgroup-XXXXXX");
	if (!mkdtemp(fake)) {
		skip("cannot make a temporary directory", "v2 plans");
		return;
	}
	snprintf(me, sizeof(me), "%d\n", getpid());
	snprintf(me_and, sizeof(me_and), "%d\n%d\n", getpid(), getpid() + 1);

	rc = plan("root-on", "cpu io memory pids\n", "cpu memory\n", NULL, me, &p);
	ok(rc == 0 && !p.leaf && !p.enable, "v2: a cgroup that hands memory on already needs nothing");
	rc = plan("root", "cpu io memory pids\n", "\n", NULL, me, &p);
	ok(rc == 0 && !p.leaf && p.enable,
	   "v2: the root (no cgroup.type) may keep its processes and enable memory");
	rc = plan("alone", "cpu memory pids\n", "\n", "domain\n", me, &p);
	ok(rc == 0 && p.leaf && p.enable,
	   "v2: alone in our cgroup: into a leaf beneath it first, then enable memory there");
	rc = plan("shared", "cpu memory pids\n", "\n", "domain\n", me_and, &p);
	ok(rc == -EBUSY, "v2: another process in our cgroup: refused (not moved, no ancestor)");
	rc = plan("undelegated", "cpu pids\n", "\n", "domain\n", me, &p);
	ok(rc == -EOPNOTSUPP, "v2: memory not delegated to our cgroup: refused (no ancestor)");
	rc = plan("lookalike", "cpu memoryx pids\n", "xmemory\n", "domain\n", me, &p);
	ok(rc == -EOPNOTSUPP, "v2: controllers are matched as whole words");
	rc = plan("empty", "memory\n", "\n", "domain\n", "", &p);
	ok(rc == 0 && !p.leaf && p.enable, "v2: a cgroup without processes just enables memory");
	rc = plan("broken", NULL, NULL, NULL, NULL, &p);
	ok(rc == -ENOENT, "v2: not a cgroup directory: -ENOENT");
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fake);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", fake);
	}
}

/* Our cgroup in the v2 hierarchy ("0::PATH" in /proc/self/cgroup). */
static const char *v2_self(void)
{
	static char line[512];
	FILE *f = fopen("/proc/self/cgroup", "r");

	line[0] = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			fclose(f);
			return line + 3;
		}
	if (f)
		fclose(f);
	return "";
}

static int put(const char *dir, const char *file, const char *val)
{
	return pc_cgroup_write(dir, file, val);
}

/*
 * The v2 steps for real, on this kernel's v2 hierarchy, with a controller
 * it has there: hugetlb (on a hybrid host the memory controller is v1's).
 * Only on a hybrid host's /sys/fs/cgroup/unified, which nothing else here
 * uses: the controller is turned on in its root, and off again if it was off.
 */
static void test_real_v2(void)
{
	static const char U[] = "/sys/fs/cgroup/unified", CTL[] = "hugetlb";
	char c[128], child[160], buf[512], orig[512];
	struct pc_cgroup_nest n;
	struct statfs sf;
	bool root_on;
	pid_t other;
	int rc;

	if (statfs(U, &sf) < 0 || sf.f_type != 0x63677270 ||
	    pc_read_text("/sys/fs/cgroup/unified/cgroup.controllers", buf, sizeof(buf)) < 0 ||
	    !strstr(buf, CTL)) {
		skip("no hybrid v2 hierarchy with hugetlb (/sys/fs/cgroup/unified)", "real v2 nest");
		return;
	}
	if (access(U, W_OK) < 0 || access("/sys/fs/cgroup/unified/cgroup.subtree_control", W_OK) < 0) {
		skip("cannot write the v2 root /sys/fs/cgroup/unified (read-only mount, or not ours)",
		     "real v2 nest");
		return;
	}
	snprintf(orig, sizeof(orig), "%s%s", U, v2_self());
	pc_read_text("/sys/fs/cgroup/unified/cgroup.subtree_control", buf, sizeof(buf));
	root_on = strstr(buf, CTL) != NULL;
	if (!root_on && put(U, "cgroup.subtree_control", "+hugetlb") < 0) {
		skip("cannot turn hugetlb on in the v2 root", "real v2 nest");
		return;
	}
	snprintf(c, sizeof(c), "%s/pc-test-v2-%d", U, getpid());
	snprintf(child, sizeof(child), "%s/child", c);
	if (mkdir(c, 0755) < 0 || pc_cgroup_enter(c, getpid()) < 0) {
		skip("cannot make a v2 cgroup and enter it", "real v2 nest");
		goto out;
	}
	rc = pc_cgroup_nest_at(&n, c, CTL);
	ok(rc == 0 && n.leaf[0] && n.enabled,
	   "real v2: alone in our cgroup, we move into a leaf and turn the controller on (%d)", rc);
	snprintf(buf, sizeof(buf), "%s/pagecache-run-%d-self", c + strlen(U), getpid());
	ok(!strcmp(v2_self(), buf), "real v2: we are in the leaf (%s)", v2_self());
	ok(mkdir(child, 0755) == 0 && pc_read_text(strcat(strcpy(buf, child), "/cgroup.controllers"),
						  buf, sizeof(buf)) == 0 && strstr(buf, CTL),
	   "real v2: a child made beside the leaf has the controller");
	other = fork();
	if (other == 0) {
		pause();
		_exit(0);
	}
	ok(pc_cgroup_enter(child, other) == 0 && pc_cgroup_move_procs(child, n.leaf) == 1,
	   "real v2: what a command leaves in its cgroup moves into our leaf");
	ok(rmdir(child) == 0, "real v2: the child is removed");
	rc = pc_cgroup_nest_release(&n);
	ok(rc == 0 && !n.leaf[0] && !n.enabled, "real v2: released (%d)", rc);
	ok(!strcmp(v2_self(), c + strlen(U)), "real v2: we are back in our cgroup");
	ok(pc_read_text(strcat(strcpy(buf, c), "/cgroup.subtree_control"), buf, sizeof(buf)) == 0 &&
	   !strstr(buf, CTL), "real v2: its subtree_control is as it was");
	snprintf(buf, sizeof(buf), "%s/pagecache-run-%d-self", c, getpid());
	ok(access(buf, F_OK) < 0, "real v2: the leaf is gone");
	/* the leftover came back with us: now another process shares our cgroup */
	rc = pc_cgroup_nest_at(&n, c, CTL);
	ok(rc == -EBUSY && access(buf, F_OK) < 0 && !strcmp(v2_self(), c + strlen(U)),
	   "real v2: with another process in our cgroup: -EBUSY, nothing changed (%d)", rc);
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
out:
	pc_cgroup_enter(orig, getpid());
	rmdir(child);
	rmdir(c);
	if (!root_on)
		put(U, "cgroup.subtree_control", "-hugetlb");
}

/* ---- naming: pc_cgroup_resolve_in on a made-up /sys/fs/cgroup ---- */

static char rtop[64];

/* mkdir -p DIR beneath rtop, with memory file `mem` in it (NULL: none) */
static void mkcg(const char *rel, const char *mem)
{
	char path[PATH_MAX], *p;

	snprintf(path, sizeof(path), "%s/%s", rtop, rel);
	for (p = path + strlen(rtop) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
	if (mem) {
		FILE *f;

		strcat(path, "/");
		strcat(path, mem);
		f = fopen(path, "w");
		if (f) {
			fputs("max\n", f);
			fclose(f);
		}
	}
}

#define V1 "memory.limit_in_bytes"
#define ID_A "0123456789ab" "cdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID_B "abcdefabcdef" "0123456789abcdef0123456789abcdef0123456789abcdef0123"
#define ID_C "c0ffeec0ffee" "0123456789abcdef0123456789abcdef0123456789abcdef0123"
#define ID_D "d00dd00dd00d" "0123456789abcdef0123456789abcdef0123456789abcdef0123"
/* two cgroupfs-driver IDs alike in their first 13 digits */
#define ID_E "eeeeeeeeeeee" "e000000000000000000000000000000000000000000000000000"
#define ID_F "eeeeeeeeeeee" "e111111111111111111111111111111111111111111111111111"
#define ID_K "4b4b4b4b4b4b" "0123456789abcdef0123456789abcdef0123456789abcdef0123"
#define ID_P "9a9a9a9a9a9a" "0123456789abcdef0123456789abcdef0123456789abcdef0123"

static int res(const struct pc_cgroup_fs *fs, const char *spec, char *ret, char *why)
{
	ret[0] = why[0] = 0;
	return pc_cgroup_resolve_in(fs, spec, ret, PATH_MAX, why, 1024);
}

/* ret is the made-up root plus rel */
static bool at(const char *ret, const char *root, const char *rel)
{
	char want[PATH_MAX];

	snprintf(want, sizeof(want), "%s%s", root, rel);
	return !strcmp(ret, want);
}

static void test_resolve(void)
{
	char base[128], v1[160], v2[160], ret[PATH_MAX], why[1024], spec[PATH_MAX], deep[PATH_MAX];
	struct pc_cgroup_fs fs1, fs2;
	int rc;

	snprintf(rtop, sizeof(rtop), "/tmp/pc-test-cgname-XXXXXX");
	if (!mkdtemp(rtop)) {
		skip("cannot make a temporary directory", "cgroup names");
		return;
	}
	/* base/memory: v1; base/systemd: another v1 hierarchy; v2: a unified one */
	snprintf(base, sizeof(base), "%s/cgroup", rtop);
	snprintf(v1, sizeof(v1), "%s/memory", base);
	snprintf(v2, sizeof(v2), "%s/v2", rtop);
	fs1 = (struct pc_cgroup_fs){ .base = base, .root = v1, .version = 1 };
	fs2 = (struct pc_cgroup_fs){ .base = v2, .root = v2, .version = 2 };
	mkcg("cgroup/memory", V1);
	mkcg("cgroup/memory/system.slice", V1);
	mkcg("cgroup/memory/system.slice/mariadb.service", V1);
	mkcg("cgroup/memory/system.slice/foo\\x2dbar.service", V1);
	mkcg("cgroup/memory/system.slice/a \"quoted\" 'name'.service", V1);
	mkcg("cgroup/memory/system.slice/docker-" ID_A ".scope", V1);
	mkcg("cgroup/memory/machine.slice/libpod-" ID_B ".scope/container", V1);
	mkcg("cgroup/memory/machine.slice/libpod-" ID_B ".scope", V1);
	mkcg("cgroup/memory/machine.slice/libpod-conmon-" ID_B ".scope", V1);
	mkcg("cgroup/memory/kubepods.slice/kubepods-burstable.slice/"
	     "kubepods-burstable-pod1234.slice/cri-containerd-" ID_C ".scope", V1);
	mkcg("cgroup/memory/system.slice/crio-" ID_D ".scope", V1);
	mkcg("cgroup/memory/system.slice/crio-conmon-" ID_D ".scope", V1);
	mkcg("cgroup/memory/docker/" ID_E, V1);
	mkcg("cgroup/memory/docker/" ID_F, V1);
	mkcg("cgroup/memory/kubepods/burstable/pod5678/" ID_K, V1);
	mkcg("cgroup/memory/libpod_parent/libpod-" ID_P, V1);
	mkcg("cgroup/memory/libpod_parent/conmon", V1);
	mkcg("cgroup/memory/user.slice/dup.service", V1);
	mkcg("cgroup/memory/other.slice/dup.service", V1);
	mkcg("cgroup/memory/nomem.service", NULL);
	mkcg("cgroup/systemd/system.slice/mariadb.service", NULL);
	mkcg("outside/evil.service", V1);
	mkcg("v2", NULL);
	mkcg("v2/system.slice", "memory.max");
	mkcg("v2/system.slice/x.service", "memory.max");
	mkcg("v2/system.slice/nomem.service", NULL);
	{
		char p[PATH_MAX], t[PATH_MAX];
		FILE *f;

		snprintf(p, sizeof(p), "%s/v2/cgroup.controllers", rtop);
		f = fopen(p, "w");
		if (f) {
			fputs("cpu io memory pids\n", f);
			fclose(f);
		}
		/* links: one to a cgroup outside the hierarchy, one to a dir holding one */
		snprintf(p, sizeof(p), "%s/link", v1);
		snprintf(t, sizeof(t), "%s/outside/evil.service", rtop);
		if (symlink(t, p) < 0)
			perror("symlink");
		snprintf(p, sizeof(p), "%s/system.slice/outlink", v1);
		snprintf(t, sizeof(t), "%s/outside", rtop);
		if (symlink(t, p) < 0)
			perror("symlink");
	}

	/* the cgroupfs directory, the path, a name */
	snprintf(spec, sizeof(spec), "%s/system.slice/mariadb.service", v1);
	rc = res(&fs1, spec, ret, why);
	ok(rc == 0 && at(ret, v1, "/system.slice/mariadb.service"),
	   "names: the cgroupfs directory (%d %s)", rc, why);
	rc = res(&fs1, "/system.slice/mariadb.service", ret, why);
	ok(rc == 0 && at(ret, v1, "/system.slice/mariadb.service"),
	   "names: the path in the hierarchy, as systemctl prints it");
	rc = res(&fs1, "system.slice/mariadb.service/", ret, why);
	ok(rc == 0 && at(ret, v1, "/system.slice/mariadb.service"),
	   "names: a relative path, a trailing slash");
	rc = res(&fs1, "mariadb.service", ret, why);
	ok(rc == 0 && at(ret, v1, "/system.slice/mariadb.service"),
	   "names: a unit name, found below (%d %s)", rc, why);
	rc = res(&fs1, "system.slice", ret, why);
	ok(rc == 0 && at(ret, v1, "/system.slice"), "names: a slice at the top");
	rc = res(&fs1, "foo\\x2dbar.service", ret, why);
	ok(rc == 0 && at(ret, v1, "/system.slice/foo\\x2dbar.service"),
	   "names: a systemd escape is a literal name (%d %s)", rc, why);
	rc = res(&fs1, "foo-bar.service", ret, why);
	ok(rc == -ENOENT, "names: and is not unescaped");
	rc = res(&fs1, "a \"quoted\" 'name'.service", ret, why);
	ok(rc == 0 && at(ret, v1, "/system.slice/a \"quoted\" 'name'.service"),
	   "names: spaces and quotes");
	snprintf(spec, sizeof(spec), "%s/systemd/system.slice/mariadb.service", base);
	rc = res(&fs1, spec, ret, why);
	ok(rc == 0 && at(ret, v1, "/system.slice/mariadb.service"),
	   "names: another v1 hierarchy's directory: the same cgroup in memory's (%d %s)", rc, why);
	snprintf(spec, sizeof(spec), "%s/systemd", base);
	rc = res(&fs1, spec, ret, why);
	ok(rc == 0 && !strcmp(ret, v1), "names: another hierarchy's root is the root");
	/* once the root, and so every process's files, for evict --cgroup */
	snprintf(spec, sizeof(spec), "%s/typo", base);
	rc = res(&fs1, spec, ret, why);
	ok(rc == -ENOENT && strstr(why, "in no cgroup hierarchy"),
	   "names: a directory of the base that is no hierarchy is no cgroup (%d %s)", rc, why);
	snprintf(spec, sizeof(spec), "%s/memoryX/system.slice", base);
	rc = res(&fs1, spec, ret, why);
	ok(rc == -ENOENT, "names: nor is a path below it (%d %s)", rc, why);
	rc = res(&fs1, v1, ret, why);
	ok(rc == 0 && !strcmp(ret, v1), "names: the root's directory is the root");
	rc = res(&fs1, "/", ret, why);
	ok(rc == 0 && !strcmp(ret, v1), "names: '/' is the root");

	/* ambiguity, absence: the reason names the candidates, what was tried */
	rc = res(&fs1, "dup.service", ret, why);
	ok(rc == -ENOTUNIQ && strstr(why, "'/user.slice/dup.service'") &&
	   strstr(why, "'/other.slice/dup.service'") && !ret[0],
	   "names: two cgroups of one name: refused, both named (%s)", why);
	rc = res(&fs1, "nothere.service", ret, why);
	ok(rc == -ENOENT && strstr(why, "no such memory cgroup") && strstr(why, "nothere.service") &&
	   strstr(why, v1), "names: none: what was tried (%s)", why);
	rc = res(&fs1, "nomem.service", ret, why);
	ok(rc == -EMEDIUMTYPE && strstr(why, "without the memory controller"),
	   "names: a directory without the memory files is no memory cgroup, and is not one "
	   "gone (-EMEDIUMTYPE, not -ENOENT: snapshot --guard takes -ENOENT for a service "
	   "down) (%d %s)", rc, why);
	rc = res(&fs1, "no/such", ret, why);
	ok(rc == -ENOENT && strstr(why, "no/such"), "names: a path that is not there (%s)", why);

	/* containers */
	rc = res(&fs1, "0123456789ab", ret, why);
	ok(rc == 0 && at(ret, v1, "/system.slice/docker-" ID_A ".scope"),
	   "containers: a 12-digit prefix finds docker-ID.scope (%d %s)", rc, why);
	rc = res(&fs1, ID_B, ret, why);
	ok(rc == 0 && at(ret, v1, "/machine.slice/libpod-" ID_B ".scope"),
	   "containers: a full ID finds libpod-ID.scope (not conmon's, not the inner cgroup)");
	rc = res(&fs1, "c0ffeec0ffee01", ret, why);
	ok(rc == 0 && at(ret, v1, "/kubepods.slice/kubepods-burstable.slice/"
			  "kubepods-burstable-pod1234.slice/cri-containerd-" ID_C ".scope"),
	   "containers: cri-containerd-ID.scope, four levels down");
	rc = res(&fs1, "d00dd00dd00d", ret, why);
	ok(rc == 0 && at(ret, v1, "/system.slice/crio-" ID_D ".scope"),
	   "containers: crio-ID.scope, not crio-conmon-ID.scope (%d %s)", rc, why);
	rc = res(&fs1, "4b4b4b4b4b4b", ret, why);
	ok(rc == 0 && at(ret, v1, "/kubepods/burstable/pod5678/" ID_K),
	   "containers: the cgroupfs driver's bare ID (/kubepods/.../ID)");
	rc = res(&fs1, ID_P, ret, why);
	ok(rc == 0 && at(ret, v1, "/libpod_parent/libpod-" ID_P),
	   "containers: podman's cgroupfs driver's libpod-ID (%d %s)", rc, why);
	rc = res(&fs1, "eeeeeeeeeeeee", ret, why);
	ok(rc == -ENOTUNIQ && strstr(why, "/docker/" ID_E) && strstr(why, "/docker/" ID_F),
	   "containers: a prefix two IDs share: refused, both named");
	rc = res(&fs1, "eeeeeeeeeeeee1", ret, why);
	ok(rc == 0 && at(ret, v1, "/docker/" ID_F), "containers: one digit more tells them apart");
	rc = res(&fs1, "0123456789a", ret, why);
	ok(rc == -ENOENT, "containers: 11 digits are not taken as an ID prefix");
	rc = res(&fs1, "0123456789AB", ret, why);
	ok(rc == -ENOENT, "containers: IDs are lowercase hex");

	/* never outside, no link followed */
	ok(res(&fs1, "../etc", ret, why) == -EINVAL && strstr(why, ".."), "'..' is refused (%s)", why);
	ok(res(&fs1, "system.slice/../../outside", ret, why) == -EINVAL, "'..' inside a path too");
	snprintf(spec, sizeof(spec), "%s/../outside/evil.service", v1);
	ok(res(&fs1, spec, ret, why) == -EINVAL, "'..' in a directory form too");
	ok(res(&fs1, "", ret, why) == -EINVAL, "an empty name is refused");
	rc = res(&fs1, "link", ret, why);
	ok(rc == -EXDEV && strstr(why, "outside"), "a link out of the hierarchy is refused (%s)", why);
	rc = res(&fs1, "system.slice/outlink/evil.service", ret, why);
	ok(rc == -EXDEV, "a path through a link out of the hierarchy is refused (%d)", rc);
	rc = res(&fs1, "evil.service", ret, why);
	ok(rc == -ENOENT, "the search follows no link (%d %s)", rc, ret);
	ok(pc_cgroup_resolve_in(&fs1, "dup.service", ret, PATH_MAX, NULL, 0) == -ENOTUNIQ,
	   "no reason buffer: the same answer");

	/* bounds: depth and count */
	strcpy(deep, "cgroup/memory/deep");
	for (int i = 0; i < 14; i++)	/* deep is level 1, the last d level 15 */
		strcat(deep, "/d");
	mkcg(deep, V1);
	strcat(deep, "/at16.service");
	mkcg(deep, V1);
	*strrchr(deep, '/') = 0;
	strcat(deep, "/d/at17.service");
	mkcg(deep, V1);
	ok(res(&fs1, "at16.service", ret, why) == 0, "bounds: found 16 levels down");
	rc = res(&fs1, "at17.service", ret, why);
	ok(rc == -ENOENT, "bounds: not searched 17 levels down (%d)", rc);
	ok(res(&fs1, "deep/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/at17.service", ret, why) == 0,
	   "bounds: its path still names it");
	fs1.max_seen = 5;
	rc = res(&fs1, "mariadb.service", ret, why);
	ok(rc == -E2BIG && strstr(why, "more than 5 cgroups"),
	   "bounds: past max_seen cgroups the search stops, saying so (%s)", why);
	fs1.max_seen = 0;

	/* v2: the root is the hierarchy's mount, which has no memory.max */
	snprintf(spec, sizeof(spec), "%s/system.slice/x.service", v2);
	rc = res(&fs2, spec, ret, why);
	ok(rc == 0 && at(ret, v2, "/system.slice/x.service"), "v2: the cgroupfs directory");
	rc = res(&fs2, "x.service", ret, why);
	ok(rc == 0 && at(ret, v2, "/system.slice/x.service"), "v2: a unit name");
	rc = res(&fs2, "/", ret, why);
	ok(rc == 0 && !strcmp(ret, v2), "v2: the root (memory in cgroup.controllers)");
	rc = res(&fs2, "nomem.service", ret, why);
	ok(rc == -EMEDIUMTYPE && strstr(why, "1 cgroup of that name without the memory controller"),
	   "v2: a cgroup without memory.max is no memory cgroup, and is there (%d %s)", rc, why);
	rc = res(&fs2, "system.slice/nomem.service", ret, why);
	ok(rc == -EMEDIUMTYPE, "v2: so named by its path too (%d %s)", rc, why);
	rc = res(&fs2, "system.slice/gone.service", ret, why);
	ok(rc == -ENOENT, "v2: one that is not there at all: -ENOENT (%d %s)", rc, why);

	/*
	 * a name is never found in a subtree another user owns (a delegated
	 * user@UID.service, a rootless container): that user could make a
	 * cgroup of a service's name there, and root's restore or snapshot
	 * would go to it (or fail, two of that name). A cgroup that user owns
	 * with a parent of root's (a Delegate=yes service) is still found.
	 */
	if (geteuid() == 0) {
		char own[PATH_MAX];

		mkcg("v2/user.slice/user@65534.service/app.slice", "memory.max");
		mkcg("v2/user.slice/user@65534.service/app.slice/hijack.service", "memory.max");
		mkcg("v2/user.slice/user@65534.service/x.service", "memory.max");
		mkcg("v2/system.slice/deleg.service", "memory.max");
		snprintf(own, sizeof(own), "%s/user.slice/user@65534.service", v2);
		ok(chown(own, 65534, 65534) == 0, "a delegated subtree: %s is nobody's", own);
		snprintf(own, sizeof(own), "%s/user.slice/user@65534.service/app.slice", v2);
		ok(chown(own, 65534, 65534) == 0, "and what it made beneath");
		snprintf(own, sizeof(own), "%s/user.slice/user@65534.service/app.slice/hijack.service",
			 v2);
		ok(chown(own, 65534, 65534) == 0, "its hijack.service too");
		snprintf(own, sizeof(own), "%s/system.slice/deleg.service", v2);
		ok(chown(own, 65534, 65534) == 0, "a Delegate=yes service's cgroup is its user's");
		rc = res(&fs2, "hijack.service", ret, why);
		ok(rc == -ENOENT && strstr(why, "another user"),
		   "owners: root's name is not looked for in a user's subtree (%d %s %s)", rc, ret, why);
		rc = res(&fs2, "x.service", ret, why);
		ok(rc == 0 && at(ret, v2, "/system.slice/x.service"),
		   "owners: nor does a user's cgroup of that name make root's ambiguous (%d %s)", rc, why);
		rc = res(&fs2, "deleg.service", ret, why);
		ok(rc == 0 && at(ret, v2, "/system.slice/deleg.service"),
		   "owners: a user's cgroup where root's slice put it is found (%d %s)", rc, why);
		rc = res(&fs2, "user.slice/user@65534.service/app.slice/hijack.service", ret, why);
		ok(rc == 0, "owners: a path still names one in a user's subtree (%d %s)", rc, why);
	} else {
		skip("not root: cannot give a directory to another user", "cgroup owners");
	}

	/* where the daemon watches for a service's cgroup that is not there yet */
	ok(pc_cgroup_watch_dir_in(&fs2, "system.slice/late.service", ret, PATH_MAX) == 0 &&
	   at(ret, v2, "/system.slice"), "v2 watch: a unit's cgroup not there yet: its slice (%s)", ret);
	ok(pc_cgroup_watch_dir_in(&fs2, "new.slice/late.service", ret, PATH_MAX) == 0 &&
	   !strcmp(ret, v2), "v2 watch: its slice not there either: the root (%s)", ret);
	snprintf(spec, sizeof(spec), "%s/system.slice/late.service", v2);
	ok(pc_cgroup_watch_dir_in(&fs2, spec, ret, PATH_MAX) == 0 && at(ret, v2, "/system.slice"),
	   "v2 watch: named by its directory (%s)", ret);
	ok(pc_cgroup_watch_dir_in(&fs2, "system.slice/x.service", ret, PATH_MAX) == 0 &&
	   at(ret, v2, "/system.slice/x.service"), "v2 watch: one that is there: itself");
	ok(pc_cgroup_watch_dir_in(&fs2, "late.service", ret, PATH_MAX) == -EINVAL,
	   "watch: a bare name has no one place (-EINVAL)");
	ok(pc_cgroup_watch_dir_in(&fs2, "../x/late.service", ret, PATH_MAX) == -EINVAL,
	   "watch: '..' is refused");
	ok(pc_cgroup_watch_dir_in(&fs1, "system.slice/late.service", ret, PATH_MAX) == 0 &&
	   at(ret, v1, "/system.slice"), "v1 watch: its slice in the memory hierarchy (%s)", ret);
	snprintf(spec, sizeof(spec), "%s/systemd/system.slice/late.service", base);
	ok(pc_cgroup_watch_dir_in(&fs1, spec, ret, PATH_MAX) == 0 && at(ret, v1, "/system.slice"),
	   "v1 watch: another hierarchy's directory: the same place in memory's (%s)", ret);

	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rtop);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", rtop);
	}
}

/* A file in a made-up cgroup directory. */
static void fake_file(const char *dir, const char *file, const char *text)
{
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* pc_cgroup_set_limit and pc_cgroup_events_read, on made-up v1 and v2 files. */
static void test_limit_files(void)
{
	struct pc_cgroup_events e;
	char top[64] = "/tmp/pc-test-limit-XXXXXX", v1[160], v2[160], buf[200];
	uint64_t got = 0;
	int rc;

	if (!mkdtemp(top)) {
		skip("cannot make a temporary directory", "limit files");
		return;
	}
	snprintf(v1, sizeof(v1), "%s/lim-v1", top);
	snprintf(v2, sizeof(v2), "%s/lim-v2", top);
	mkdir(v1, 0755);
	mkdir(v2, 0755);
	/* cgroupfs files take a write whole; these regular ones are emptied first */
	fake_file(v1, "memory.limit_in_bytes", "");
	fake_file(v2, "memory.max", "");
	rc = pc_cgroup_set_limit(v1, 1, 64ull << 20, &got);
	ok(rc == 0 && got == 64ull << 20, "v1: the limit goes to memory.limit_in_bytes (%d, %llu)", rc,
	   (unsigned long long)got);
	ok(pc_read_text(strcat(strcpy(buf, v1), "/memory.limit_in_bytes"), buf, sizeof(buf)) == 0 &&
	   !strcmp(buf, "67108864"), "v1: in bytes (%s)", buf);
	rc = pc_cgroup_set_limit(v2, 2, 512ull << 20, &got);
	ok(rc == 0 && got == 512ull << 20, "v2: the limit goes to memory.max (%d)", rc);
	ok(access(strcat(strcpy(buf, v2), "/memory.limit_in_bytes"), F_OK) < 0,
	   "v2: no v1 file is written");
	fake_file(v2, "memory.max", "");
	rc = pc_cgroup_set_limit(v2, 2, UINT64_MAX, &got);
	ok(rc == 0 && got == UINT64_MAX && pc_read_text(strcat(strcpy(buf, v2), "/memory.max"), buf,
							sizeof(buf)) == 0 && !strcmp(buf, "max"),
	   "v2: none is \"max\", read back as none");
	fake_file(v1, "memory.limit_in_bytes", "");
	rc = pc_cgroup_set_limit(v1, 1, UINT64_MAX, &got);
	ok(rc == 0 && got == UINT64_MAX, "v1: none is -1 (%d)", rc);
	ok(pc_cgroup_set_limit(v1, 3, 1, NULL) == -EINVAL, "an unknown version is refused");
	snprintf(buf, sizeof(buf), "%s/lim-none", top);
	ok(pc_cgroup_set_limit(buf, 1, 1 << 20, NULL) < 0, "a cgroup that is not there: an error");

	fake_file(v1, "memory.failcnt", "17\n");
	fake_file(v1, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
	rc = pc_cgroup_events_read(v1, 1, &e);
	ok(rc == 0 && e.limit_hits == 17 && e.oom_kills == 3 && e.has_oom_kills && e.oom == 0,
	   "v1: failcnt and oom_control's oom_kill (%d)", rc);
	fake_file(v1, "memory.oom_control", "oom_kill_disable 0\nunder_oom 1\n");
	rc = pc_cgroup_events_read(v1, 1, &e);
	ok(rc == 0 && !e.has_oom_kills && e.oom == 1,
	   "v1 before 4.13 (no oom_kill line): the count is unknown, not 0");
	fake_file(v2, "memory.events", "low 0\nhigh 0\nmax 250\noom 2\noom_kill 1\noom_group_kill 0\n");
	rc = pc_cgroup_events_read(v2, 2, &e);
	ok(rc == 0 && e.limit_hits == 250 && e.oom == 2 && e.oom_kills == 1 && e.has_oom_kills,
	   "v2: memory.events max, oom, oom_kill (oom_group_kill is not oom_kill) (%d)", rc);
	fake_file(v2, "memory.events", "low 0\nhigh 0\n");
	ok(pc_cgroup_events_read(v2, 2, &e) == -EBADMSG, "v2: memory.events without max is refused");
	fake_file(v1, "memory.failcnt", "x\n");
	ok(pc_cgroup_events_read(v1, 1, &e) == -EBADMSG, "v1: a failcnt that is no number is refused");
	snprintf(buf, sizeof(buf), "%s/lim-none", top);
	ok(pc_cgroup_events_read(buf, 2, &e) == -ENOENT, "a cgroup that is not there: -ENOENT");
	snprintf(buf, sizeof(buf), "rm -rf '%s'", top);
	if (system(buf) != 0)
		fprintf(stderr, "# could not remove %s\n", top);
}

/* pc_cgroup_populated on made-up v1 and v2 directories. */
static void test_populated_files(void)
{
	char top[64] = "/tmp/pc-test-pop-XXXXXX", v1[160], v1c[200], v2[160], buf[200];

	if (!mkdtemp(top)) {
		skip("cannot make a temporary directory", "populated");
		return;
	}
	snprintf(v1, sizeof(v1), "%s/pop-v1", top);
	snprintf(v1c, sizeof(v1c), "%s/child", v1);
	snprintf(v2, sizeof(v2), "%s/pop-v2", top);
	mkdir(v1, 0755);
	mkdir(v1c, 0755);
	mkdir(v2, 0755);
	/* v2: the kernel's cgroup.events of a running service, then of a stopped one */
	fake_file(v2, "cgroup.procs", "");	/* its processes in a child (Delegate=yes) */
	fake_file(v2, "cgroup.events", "populated 1\nfrozen 0\n");
	ok(pc_cgroup_populated(v2, 2) == 1, "v2: populated 1 is up, even with no process of its own");
	fake_file(v2, "cgroup.events", "populated 0\nfrozen 0\n");
	ok(pc_cgroup_populated(v2, 2) == 0, "v2: populated 0 is down");
	fake_file(v2, "cgroup.events", "frozen 0\n");
	ok(pc_cgroup_populated(v2, 2) == -EBADMSG, "v2: cgroup.events without populated is refused");
	fake_file(v1, "cgroup.procs", "4242\n");
	fake_file(v1c, "cgroup.procs", "");
	ok(pc_cgroup_populated(v1, 1) == 1, "v1: a process in cgroup.procs is up");
	fake_file(v1, "cgroup.procs", "");
	ok(pc_cgroup_populated(v1, 1) == 0, "v1: no process in it or beneath it is down");
	fake_file(v1c, "cgroup.procs", "4243\n");
	ok(pc_cgroup_populated(v1, 1) == 1, "v1: a process in a child is up");
	/*
	 * a bound: whoever may make cgroups beneath the service's (its user,
	 * Delegate=yes) must not make each status and snapshot walk 65,535
	 * of them (measured on 6.18: 3,000 empty ones took 0.23-0.51 s)
	 */
	{
		char wide[200] = "/dev/shm/pc-test-wide-XXXXXX", c[260];

		if (!mkdtemp(wide))	/* tmpfs: 4,097 directories made in well under a second */
			snprintf(wide, sizeof(wide), "%s/wide", top);
		mkdir(wide, 0755);
		fake_file(wide, "cgroup.procs", "");
		for (int i = 0; i <= PC_CGROUP_POPULATED_MAX; i++) {
			snprintf(c, sizeof(c), "%s/c%d", wide, i);
			mkdir(c, 0755);
			fake_file(c, "cgroup.procs", "");
		}
		ok(pc_cgroup_populated(wide, 1) == -E2BIG,
		   "v1: past %d empty cgroups beneath it, the walk stops (-E2BIG)",
		   PC_CGROUP_POPULATED_MAX);
		snprintf(c, sizeof(c), "rm -rf '%s'", wide);
		if (system(c) != 0)
			fprintf(stderr, "# could not remove %s\n", wide);
	}
	snprintf(buf, sizeof(buf), "%s/gone", top);
	ok(pc_cgroup_populated(buf, 1) == -ENOENT && pc_cgroup_populated(buf, 2) == -ENOENT,
	   "a cgroup that is not there: -ENOENT");
	ok(pc_cgroup_populated(v1, 3) == -EINVAL, "an unknown version is refused");
	snprintf(buf, sizeof(buf), "rm -rf '%s'", top);
	if (system(buf) != 0)
		fprintf(stderr, "# could not remove %s\n", top);
}

/* What a walk saw: "rel@depth" for each cgroup, in order. */
struct seen {
	char list[1024];
	const char *skip, *stop;	/* leave out what is below, end the walk at */
};

static int note(const struct pc_cgroup_entry *e, void *arg)
{
	struct seen *s = arg;
	size_t n = strlen(s->list);
	struct stat st;

	snprintf(s->list + n, sizeof(s->list) - n, "%s%s@%u", n ? " " : "", *e->rel ? e->rel : "/",
		 e->depth);
	if (fstat(e->fd, &st) < 0 || !S_ISDIR(st.st_mode))
		return -EBADF;
	if (s->stop && !strcmp(e->name, s->stop))
		return PC_CGROUP_WALK_STOP;
	return s->skip && !strcmp(e->name, s->skip) ? PC_CGROUP_WALK_SKIP : 0;
}

/* pc_cgroup_walk: parents first, no link followed, stops and skips as asked. */
static void test_walk(void)
{
	char top[64] = "/tmp/pc-test-walk-XXXXXX", p[200];
	const char *dirs[] = { "a", "a/b", "a/b/c", "d" };
	struct seen s = { "", NULL, NULL };
	int rc;

	if (!mkdtemp(top)) {
		skip("cannot make a temporary directory", "walk");
		return;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", top, dirs[i]);
		mkdir(p, 0755);
	}
	snprintf(p, sizeof(p), "%s/a/link", top);
	if (symlink("/", p) < 0)
		fprintf(stderr, "# symlink: %s\n", strerror(errno));
	fake_file(top, "cgroup.procs", "");
	rc = pc_cgroup_walk(top, note, &s);
	ok(rc == 0 && strstr(s.list, "/@0") == s.list && strstr(s.list, "/a@1") &&
	   strstr(s.list, "/a/b@2") && strstr(s.list, "/a/b/c@3") && strstr(s.list, "/d@1") &&
	   strstr(s.list, "/a@1") < strstr(s.list, "/a/b@2") &&
	   strstr(s.list, "/a/b@2") < strstr(s.list, "/a/b/c@3") && !strstr(s.list, "link") &&
	   !strstr(s.list, "procs"), "walk: every directory, parents first, no link or file (%s)",
	   s.list);
	s = (struct seen){ "", "b", NULL };
	rc = pc_cgroup_walk(top, note, &s);
	ok(rc == 0 && strstr(s.list, "/a/b@2") && !strstr(s.list, "/a/b/c"),
	   "walk: what is below a skipped one is left out (%s)", s.list);
	s = (struct seen){ "", NULL, "b" };
	rc = pc_cgroup_walk(top, note, &s);
	ok(rc == PC_CGROUP_WALK_STOP && !strstr(s.list, "/a/b/c"),
	   "walk: a stop ends it, and is returned (%s)", s.list);
	snprintf(p, sizeof(p), "%s/gone", top);
	ok(pc_cgroup_walk(p, note, &s) == -ENOENT, "walk: a root that is not there: -ENOENT");
	snprintf(p, sizeof(p), "rm -rf '%s'", top);
	if (system(p) != 0)
		fprintf(stderr, "# could not remove %s\n", top);
}

/* As root: a live child of ours, empty, then with a process in it. */
static void test_live_populated(void)
{
	char parent[700], dir[800], name[64];
	int version, st;
	pid_t pid;

	if (pc_cgroup_child_parent(parent, sizeof(parent), &version) < 0 || access(parent, W_OK) < 0) {
		skip("no memory cgroup of ours to make children in", "live populated");
		return;
	}
	snprintf(name, sizeof(name), "pc-test-pop-%d", getpid());
	if (pc_cgroup_create(parent, name, dir, sizeof(dir)) < 0) {
		skip("cannot make a child cgroup", "live populated");
		return;
	}
	ok(pc_cgroup_populated(dir, version) == 0, "live v%d: a new cgroup is empty", version);
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	ok(pc_cgroup_enter(dir, pid) == 0 && pc_cgroup_populated(dir, version) == 1,
	   "live v%d: with a process in it, populated", version);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	ok(pc_cgroup_populated(dir, version) == 0, "live v%d: and empty once it ended", version);
	ok(rmdir(dir) == 0, "live populated: the child is removed");
}

/* As root: a limit on a live child of ours, read back, and its counters. */
static void test_live_limit(void)
{
	struct pc_cgroup_events e;
	char parent[700], dir[800], name[64];
	uint64_t got = 0;
	int version, rc;

	if (pc_cgroup_child_parent(parent, sizeof(parent), &version) < 0 || access(parent, W_OK) < 0) {
		skip("no memory cgroup of ours to make children in", "live limit");
		return;
	}
	snprintf(name, sizeof(name), "pc-test-limit-%d", getpid());
	if (pc_cgroup_create(parent, name, dir, sizeof(dir)) < 0) {
		skip("cannot make a child cgroup", "live limit");
		return;
	}
	rc = pc_cgroup_set_limit(dir, version, (32ull << 20) + 100, &got);
	ok(rc == 0 && got <= (32ull << 20) + 100 && got >= 32ull << 20,
	   "live v%d: a limit is set and read back as the kernel keeps it (%llu)", version,
	   (unsigned long long)got);
	rc = pc_cgroup_events_read(dir, version, &e);
	ok(rc == 0 && e.limit_hits == 0 && e.oom_kills == 0,
	   "live v%d: a fresh cgroup has hit no limit and killed nothing (%d)", version, rc);
	ok(pc_cgroup_set_limit(dir, version, UINT64_MAX, &got) == 0 && got == UINT64_MAX,
	   "live v%d: and lifted again", version);
	ok(rmdir(dir) == 0, "live limit: the child is removed");
}

/* As root: a child beneath ours, with a process in it, moved out and removed. */
static void test_live_nest(void)
{
	struct pc_cgroup_nest n;
	char root[64], self[512], want[700], dir[800], name[64];
	int version, rc;
	pid_t pid;

	if (pc_cgroup_root(root, sizeof(root), &version) < 0 || pc_cgroup_self(self, sizeof(self)) < 0) {
		skip("no memory cgroup controller mounted", "live nest");
		return;
	}
	snprintf(want, sizeof(want), "%s%s", root, strcmp(self, "/") ? self : "");
	if (access(want, W_OK) < 0) {
		skip("cannot write our own cgroup's directory (read-only cgroupfs, or not ours)", "live nest");
		return;
	}
	rc = pc_cgroup_nest_init(&n);
	if (rc == -EBUSY || rc == -EOPNOTSUPP) {
		skip("v2, and our cgroup cannot hand memory on", "live nest");
		return;
	}
	if (rc == 0 && n.scope[0]) {
		/* v2 under systemd, a cgroup shared or not delegated: a scope of ours */
		const char *base = strrchr(n.parent, '/');

		ok(base && !strcmp(base + 1, n.scope) && !strncmp(n.parent, root, strlen(root)),
		   "nest: children go beneath the scope systemd made for us (%s)", n.parent);
	} else {
		ok(rc == 0 && !strcmp(n.parent, want), "nest: children go beneath our own cgroup (%s)",
		   n.parent);
	}
	snprintf(name, sizeof(name), "pc-test-nest-%d", getpid());
	rc = pc_cgroup_create(n.parent, name, dir, sizeof(dir));
	ok(rc == 0, "nest: a child cgroup is made there");
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	ok(pc_cgroup_enter(dir, pid) == 0, "a process enters it");
	ok(pc_cgroup_move_procs(dir, n.leaf[0] ? n.leaf : n.parent) == 1, "and is moved out again");
	ok(rmdir(dir) == 0, "the empty child is removed");
	rc = pc_cgroup_create(n.parent, name, dir, sizeof(dir));
	ok(rc == 0 && pc_cgroup_enter(dir, pid) == 0, "again, with the process in it");
	ok(pc_cgroup_remove(dir) == 0, "pc_cgroup_remove: killed, dropped, removed");
	{
		int st = 0;

		ok(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		   "its process was killed");
	}
	ok(access(dir, F_OK) < 0 && errno == ENOENT, "and the cgroup is gone");
	ok(pc_cgroup_nest_release(&n) == 0 && !n.leaf[0] && !n.enabled, "nest released");
}

int main(void)
{
	struct pc_cgroup_stat s;
	char *t, root[64], self[512], dir[700];
	int version;

	t = slurp("tests/fixtures/cgroup-v2/memory.stat");
	ok(t && pc_cgroup_parse_stat(2, t, &s) == 0, "v2 memory.stat parses");
	ok(s.file == 734003200 && s.active_file == 209715200 && s.inactive_file == 524288000,
	   "v2: file, active_file, inactive_file");
	ok(s.dirty == 65536 && s.writeback == 8192 && s.shmem == 4096 && s.mapped == 12582912,
	   "v2: file_dirty, file_writeback, shmem, file_mapped");
	ok(s.anon == 1052672 && s.refault_file == 4242 && s.activate_file == 1717 && s.has_activate,
	   "v2: anon, workingset_refault_file, workingset_activate_file");
	ok(pc_cgroup_parse_stat(2, "anon 1\nkernel 2\n", &s) == -EBADMSG,
	   "v2 text without 'file' is refused, not zeros");
	ok(pc_cgroup_parse_stat(2, "filex 5\nfile_mapped 3\n", &s) == -EBADMSG,
	   "keys are matched whole ('file' is not 'file_mapped')");

	t = slurp("tests/fixtures/cgroup-v1/memory.stat");
	ok(t && pc_cgroup_parse_stat(1, t, &s) == 0, "v1 memory.stat (recorded) parses");
	ok(s.file > 0 && s.file >= s.active_file, "v1: total_cache is the hierarchical file count");
	ok(!s.has_activate, "v1 has no activation counter: unknown, not 0");
	ok(pc_cgroup_parse_stat(1, "cache 4096\nrss 8192\n", &s) == 0 && s.file == 4096,
	   "v1 without total_* (old kernels): the local cache");
	ok(pc_cgroup_parse_stat(3, "file 1\n", &s) == -EINVAL, "unknown version refused");

	if (pc_cgroup_root(root, sizeof(root), &version) == 0) {
		ok(version == 1 || version == 2, "live hierarchy: v%d at %s", version, root);
		ok(pc_cgroup_self(self, sizeof(self)) == 0 && self[0] == '/', "our cgroup: %s", self);
		{
			char of[sizeof(self)] = "";

			ok(pc_cgroup_of(getpid(), of, sizeof(of)) == 0 && !strcmp(of, self),
			   "pc_cgroup_of our pid is pc_cgroup_self (%s)", of);
			ok(pc_cgroup_of(INT_MAX, of, sizeof(of)) == -ENOENT,
			   "pc_cgroup_of a pid that is not there: -ENOENT");
		}
		snprintf(dir, sizeof(dir), "%s%s", root, strcmp(self, "/") ? self : "");
		{
			int rc = pc_cgroup_read(dir, version, &s);

			ok(rc == 0 && s.usage > 0, "our cgroup reads (usage %llu)",
			   (unsigned long long)s.usage);
		}
		ok(pc_cgroup_dir(self, dir, sizeof(dir)) == 0, "pc_cgroup_dir finds it");
		ok(pc_cgroup_dir("../etc", dir, sizeof(dir)) == -EINVAL, "'..' is refused");
		{
			char spec[1200], got[700], want[700], why[1024];
			const char *name = strrchr(self, '/') + 1;

			snprintf(want, sizeof(want), "%s%s", root, strcmp(self, "/") ? self : "");
			snprintf(spec, sizeof(spec), "%s%s", root, self);
			ok(pc_cgroup_resolve(spec, got, sizeof(got), why, sizeof(why)) == 0 &&
			   !strcmp(got, want), "live: our cgroup by its directory (%s)", spec);
			if (*name) {
				int rc = pc_cgroup_resolve(name, got, sizeof(got), why, sizeof(why));

				ok((rc == 0 && !strcmp(got, want)) || rc == -ENOTUNIQ,
				   "live: our cgroup by its name '%s' (%d %s)", name, rc, rc ? why : "");
			}
		}
		ok(pc_cgroup_child_parent(dir, sizeof(dir), &version) < 0 ||
		   (!strncmp(dir, root, strlen(root)) &&
		    !strcmp(dir + strlen(root), strcmp(self, "/") ? self : "")),
		   "child_parent is our own cgroup or none, never an ancestor");
	} else {
		skip("no memory cgroup controller mounted", "live hierarchy");
	}
	test_plan_v2();
	test_resolve();
	test_limit_files();
	test_live_nest();
	test_live_limit();
	test_populated_files();
	test_walk();
	test_live_populated();
	test_real_v2();
	return done_testing();
}
