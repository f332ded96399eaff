import { describe, expect, it } from "vitest";
import { parseCgroupMounts, pidsCgroupDir } from "../../agent/exec/cgroup.js";

const V1_MOUNTINFO = [
  "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
  "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
  "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
  "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
].join("\n");

const V2_MOUNTINFO =
  "30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate";

describe("pids cgroup discovery", () => {
  it("reads the cgroup hierarchies of mountinfo, with their controllers", () => {
    expect(parseCgroupMounts(V1_MOUNTINFO)).toEqual([
      { version: 1, root: "/", mountPoint: "/sys/fs/cgroup/memory", controllers: ["rw", "memory"] },
      { version: 1, root: "/", mountPoint: "/sys/fs/cgroup/pids", controllers: ["rw", "pids"] },
      { version: 2, root: "/", mountPoint: "/sys/fs/cgroup/unified", controllers: [] },
    ]);
  });

  it("prefers the v1 pids hierarchy at the process's own cgroup", () => {
    const procCgroup = "8:pids:/user.slice/herald\n4:memory:/x\n0::/user.slice/herald";
    expect(pidsCgroupDir(procCgroup, V1_MOUNTINFO)).toEqual({
      dir: "/sys/fs/cgroup/pids/user.slice/herald",
      version: 1,
    });
  });

  it("uses the unified hierarchy (v2) where no v1 pids controller is mounted", () => {
    expect(pidsCgroupDir("0::/system.slice/herald.service\n", V2_MOUNTINFO)).toEqual({
      dir: "/sys/fs/cgroup/system.slice/herald.service",
      version: 2,
    });
  });

  it("maps a cgroup path through a mount whose root is not / (a bind-mounted subtree)", () => {
    const mountinfo = "50 24 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw";
    expect(pidsCgroupDir("0::/docker/abc/herald\n", mountinfo)?.dir).toBe("/sys/fs/cgroup/herald");
  });

  it("finds nothing where no cgroup file system is mounted", () => {
    expect(pidsCgroupDir("0::/\n", "22 1 0:21 / /proc rw - proc proc rw")).toBeUndefined();
  });
});
