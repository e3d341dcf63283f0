/*
 * cgroup.c: memory.stat of v1 and v2 read into one shape (from recorded
 * files, so v2 is tested on a v1 machine), and the live hierarchy found.
 */
#include "pagecache.h"
#include "tap.h"

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
		snprintf(dir, sizeof(dir), "%s%s", root, strcmp(self, "/") ? self : "");
		{
			int rc = pc_cgroup_read(dir, version, &s);

			ok(rc == 0 && s.usage > 0, "our cgroup reads (usage %llu)",
			   (unsigned long long)s.usage);
		}
		ok(pc_cgroup_dir(self, dir, sizeof(dir)) == 0, "pc_cgroup_dir finds it");
		ok(pc_cgroup_dir("../etc", dir, sizeof(dir)) == -EINVAL, "'..' is refused");
	} else {
		skip("no memory cgroup controller mounted", "live hierarchy");
	}
	return done_testing();
}
