/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-layers: a layer directory's digest (lib/layers.c), from stores made
 * here as containers/storage and docker lay them out: through an l/ link
 * and by ID/diff, a store read again when its file changed, and every file
 * that may not decide (not root's, group- or world-writable, a link, too
 * large, not JSON, a link of l/ of another form, a diff not a digest)
 * giving an unknown digest. No mount: the lookup of a layer directory is
 * the same whoever mounted it (t-layers.sh mounts).
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "../../lib/internal.h"
#include "tap.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ID1 = "1111111111111111111111111111111111111111111111111111111111111111";
static const char *ID2 = "2222222222222222222222222222222222222222222222222222222222222222";
static const char *D1 = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char *D2 = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static void sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		printf("# failed: %s\n", cmd);
}

/* a containers/storage graphroot of layer ID1 (l/SHORT1) and, if two, ID2, each with its digest */
static void cs_store(const char *g, bool two)
{
	sh("umask 022; mkdir -p '%s/overlay/%s/diff' '%s/overlay/%s/diff' '%s/overlay/l' "
	   "'%s/overlay-layers' && ln -sfn ../%s/diff '%s/overlay/l/SHORT1' && "
	   "ln -sfn ../%s/diff '%s/overlay/l/SHORT2'",
	   g, ID1, g, ID2, g, g, ID1, g, ID2, g);
	sh("umask 077; printf '[{\"id\":\"%s\",\"created\":\"x\",\"diff-digest\":\"%s\",\"uidset\":[0]}%s%s%s%s]' "
	   ">'%s/overlay-layers/layers.json'",
	   ID1, D1, two ? ",{\"id\":\"" : "", two ? ID2 : "", two ? "\",\"diff-digest\":\"" : "",
	   two ? "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}" : "",
	   g);
}

/* the digest of layer directory `dir` as text, "unknown", or "upper" */
static const char *digest_of(const char *dir)
{
	static char out[PC_LAYER_TEXT];
	uint8_t d[32];

	if (pc_layer_dir_digest(dir, d) != PC_LAYER_KNOWN)
		return "unknown";
	pc_profile_layer_text(d, 64, out, sizeof(out));
	return out;
}

static void parse(void)
{
	uint8_t d[32];

	ok(pc_layer_digest_parse(D2, strlen(D2), d) && d[0] == 0x01 && d[31] == 0xef,
	   "a digest parses: sha256: and 64 lowercase hex digits");
	ok(!pc_layer_digest_parse("sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
				  71, d), "uppercase hex: not a digest");
	ok(!pc_layer_digest_parse(D2, 70, d), "one digit short: not a digest");
	ok(!pc_layer_digest_parse("sha512:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				  71, d), "another algorithm's name: not a digest");
}

static void containers_storage(void)
{
	char g[512], dir[1024];

	snprintf(g, sizeof(g), "%s/cs", scratch_dir());
	cs_store(g, false);
	snprintf(dir, sizeof(dir), "%s/overlay/l/SHORT1", g);
	ok(!strcmp(digest_of(dir), D1), "containers/storage, through l/: layers.json's diff-digest (%s)",
	   digest_of(dir));
	snprintf(dir, sizeof(dir), "%s/overlay/%s/diff", g, ID1);
	ok(!strcmp(digest_of(dir), D1), "and by ID/diff (%s)", digest_of(dir));
	snprintf(dir, sizeof(dir), "%s/overlay/%s/diff", g, ID2);
	ok(!strcmp(digest_of(dir), "unknown"), "a layer layers.json does not list: unknown");
	/* the store changes (a pull): read again; ID2's unknown was of another directory name */
	cs_store(g, true);
	snprintf(dir, sizeof(dir), "%s/overlay/l/SHORT2", g);
	ok(!strcmp(digest_of(dir), D2), "layers.json changed: read again, the new layer's digest (%s)",
	   digest_of(dir));
	snprintf(dir, sizeof(dir), "%s/plain/layer", scratch_dir());
	sh("mkdir -p '%s'", dir);
	ok(!strcmp(digest_of(dir), "unknown"), "a directory of no store: unknown");
	ok(!strcmp(digest_of("relative/overlay/l/SHORT1"), "unknown"), "a relative name: unknown");
}

/* a fresh store `name`, changed by `cmd` (%1$s: its graphroot), then its l/SHORT1's digest */
static const char *hostile(const char *name, const char *cmd)
{
	char g[512], dir[1024];

	snprintf(g, sizeof(g), "%s/%s", scratch_dir(), name);
	cs_store(g, false);
	sh(cmd, g);
	snprintf(dir, sizeof(dir), "%s/overlay/l/SHORT1", g);
	return digest_of(dir);
}

static void untrusted(void)
{
	if (geteuid() == 0)
		ok(!strcmp(hostile("owner", "chown 65534 '%1$s/overlay-layers/layers.json'"), "unknown"),
		   "layers.json not root's: unknown");
	else
		skip("needs root: a file of another owner", "layers.json not root's");
	ok(!strcmp(hostile("gw", "chmod 620 '%1$s/overlay-layers/layers.json'"), "unknown"),
	   "layers.json group-writable: unknown");
	ok(!strcmp(hostile("dirw", "chmod 777 '%1$s/overlay-layers'"), "unknown"),
	   "its directory world-writable: unknown");
	ok(!strcmp(hostile("link", "mv '%1$s/overlay-layers/layers.json' '%1$s/real.json' && "
				   "ln -s '%1$s/real.json' '%1$s/overlay-layers/layers.json'"),
		   "unknown"),
	   "layers.json a symbolic link: unknown");
	ok(!strcmp(hostile("dirlink", "mv '%1$s/overlay-layers' '%1$s/real' && "
				      "ln -s real '%1$s/overlay-layers'"),
		   "unknown"),
	   "its directory a symbolic link: unknown");
	ok(!strcmp(hostile("big", "f='%1$s/overlay-layers/layers.json'; { head -c 1 \"$f\"; "
				  "head -c 17000000 /dev/zero | tr '\\0' ' '; tail -c +2 \"$f\"; } "
				  ">\"$f.new\" && chmod 600 \"$f.new\" && mv \"$f.new\" \"$f\""),
		   "unknown"),
	   "layers.json of 17 MB: unknown");
	ok(!strcmp(hostile("notjson", "printf '[{\"id\": 1' >'%1$s/overlay-layers/layers.json'"),
		   "unknown"),
	   "layers.json not JSON: unknown");
	ok(!strcmp(hostile("fifo", "rm '%1$s/overlay-layers/layers.json' && "
				   "mkfifo -m 600 '%1$s/overlay-layers/layers.json'"),
		   "unknown"),
	   "layers.json a FIFO: unknown, and not waited on");
	ok(!strcmp(hostile("abs", "rm '%1$s/overlay/l/SHORT1' && "
				  "ln -s '%1$s/overlay/" "1111111111111111111111111111111111111111111111111111111111111111"
				  "/diff' '%1$s/overlay/l/SHORT1'"),
		   "unknown"),
	   "an l/ link not of the form ../ID/diff: unknown");
	ok(!strcmp(hostile("other", "rm '%1$s/overlay/l/SHORT1' && "
				    "ln -s ../2222222222222222222222222222222222222222222222222222222222222222/diff "
				    "'%1$s/overlay/l/SHORT1'"),
		   "unknown"),
	   "an l/ link to a layer layers.json does not list: unknown");
}

/* docker's overlay2: ROOT/overlay2/CACHEID/diff, the layer database's cache-id and diff */
static void docker(void)
{
	char r[512], dir[1024];
	const char *cache = "cafe0000cafe0000cafe0000cafe0000cafe0000cafe0000cafe0000cafe0000";
	const char *chain = "c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1";

	snprintf(r, sizeof(r), "%s/docker", scratch_dir());
	sh("umask 022; mkdir -p '%1$s/overlay2/%2$s/diff' '%1$s/overlay2/l' "
	   "'%1$s/image/overlay2/layerdb/sha256/%3$s' '%1$s/image/overlay2/layerdb/sha256/bad' && "
	   "ln -s ../%2$s/diff '%1$s/overlay2/l/DK1' && printf '%2$s\\n' "
	   ">'%1$s/image/overlay2/layerdb/sha256/%3$s/cache-id' && printf '%4$s' "
	   ">'%1$s/image/overlay2/layerdb/sha256/%3$s/diff' && "
	   "printf x >'%1$s/image/overlay2/layerdb/sha256/bad/cache-id' && "
	   "printf 'sha256:nothex' >'%1$s/image/overlay2/layerdb/sha256/bad/diff'",
	   r, cache, chain, D2);
	snprintf(dir, sizeof(dir), "%s/overlay2/l/DK1", r);
	ok(!strcmp(digest_of(dir), D2), "docker, through l/: the layer database's diff (%s)",
	   digest_of(dir));
	snprintf(dir, sizeof(dir), "%s/overlay2/%s/diff", r, cache);
	ok(!strcmp(digest_of(dir), D2), "and by CACHEID/diff (%s)", digest_of(dir));
	sh("umask 022; mkdir -p '%s/overlay2/x/diff'", r);
	snprintf(dir, sizeof(dir), "%s/overlay2/x/diff", r);
	ok(!strcmp(digest_of(dir), "unknown"),
	   "a layer the database has not (docker's -init layers, the container's): unknown");
}

int main(void)
{
	parse();
	containers_storage();
	untrusted();
	docker();
	rm_scratch();
	return done_testing();
}
