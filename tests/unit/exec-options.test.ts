import { describe, expect, it } from "vitest";
import { DockerBackend } from "../../agent/exec/docker.js";
import { createExecutionBackend, parseExecOptions } from "../../agent/exec/index.js";
import { LocalBackend } from "../../agent/exec/local.js";
import { SandboxBackend } from "../../agent/exec/sandbox.js";
import { SshBackend } from "../../agent/exec/ssh.js";
import { ConfigError } from "../../core/errors.js";

describe("createExecutionBackend", () => {
  it("builds each backend by name, sandbox by default", () => {
    expect(createExecutionBackend({})).toBeInstanceOf(SandboxBackend);
    expect(createExecutionBackend({ backend: "local" })).toBeInstanceOf(LocalBackend);
    expect(createExecutionBackend({ backend: "docker", docker: { image: "alpine:3" } })).toBeInstanceOf(
      DockerBackend,
    );
    const ssh = createExecutionBackend({
      backend: "ssh",
      ssh: { host: "h", user: "u", identityFile: "/k", stateDir: "/s" },
    });
    expect(ssh).toBeInstanceOf(SshBackend);
  });

  it("names the bad option and the fix", () => {
    expect(() => parseExecOptions({ backend: "podman" })).toThrow(ConfigError);
    expect(() => parseExecOptions({ backend: "podman" })).toThrow(
      /exec\.backend .*"local", "sandbox", "ssh", "docker"/,
    );
    expect(() => parseExecOptions({ backend: "ssh" })).toThrow(/exec\.ssh is missing/);
    expect(() => parseExecOptions({ limits: { maxProcesses: -1 } })).toThrow(
      expect.objectContaining({ key: "exec.limits.maxProcesses" }),
    );
    expect(() => parseExecOptions({ backend: "ssh", ssh: { host: "h" } })).toThrow(/exec\.ssh\.user/);
  });

  it("takes the sandbox's pids cgroup as true, false or a directory, and names the key otherwise", () => {
    const off = createExecutionBackend({ sandbox: { pidsCgroup: false } });
    expect(off).toBeInstanceOf(SandboxBackend);
    expect((off as SandboxBackend).processLimit().cgroupDir).toBeUndefined();
    expect(parseExecOptions({ sandbox: { pidsCgroup: "/sys/fs/cgroup/herald" } }).sandbox?.pidsCgroup).toBe(
      "/sys/fs/cgroup/herald",
    );
    expect(() => parseExecOptions({ sandbox: { pidsCgroup: 3 } })).toThrow(
      /exec\.sandbox\.pidsCgroup .*true, false or a cgroup directory/,
    );
  });
});
