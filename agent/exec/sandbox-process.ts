/**
 * Kills a bubblewrap sandbox without leaving any of it behind.
 *
 * bwrap runs as two processes: the one we started (the monitor) and, in the new pid namespace, the
 * sandbox's init, which starts the command in a session of its own (`--new-session`). Signalling the
 * monitor's process group misses that session, and a monitor killed before its child has armed
 * `--die-with-parent` leaves the sandbox running with nobody to stop it (seen: a killed `sleep 600`
 * ran on). So the kill goes to the sandbox itself: bwrap reports its init's host pid on `--info-fd`; a
 * signal is sent to the init's process group (the command and its children), and SIGKILL also to the
 * init, which ends the whole pid namespace. The monitor then exits by itself, reporting the command's
 * end.
 */
import { readFileSync } from "node:fs";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { killGroup } from "./child.js";
import type { SpawnedProcess } from "./types.js";

/** The fd bwrap writes its JSON info to (the spawn's fourth pipe). */
export const INFO_FD = 3;
/** How long a kill waits for bwrap to report its init before it signals the monitor alone. */
const INFO_WAIT_MS = 2_000;

/** The sandbox init's host pid from bwrap's `--info-fd` JSON, or undefined when bwrap wrote none. */
export function readChildPid(info: Readable): Promise<number | undefined> {
  return new Promise((resolve) => {
    let text = "";
    const done = () => {
      const pid = /"child-pid"\s*:\s*(\d+)/.exec(text)?.[1];
      resolve(pid === undefined ? undefined : Number(pid));
    };
    info.setEncoding("utf8");
    info.on("data", (chunk: string) => {
      text += chunk;
      // bwrap may hold the fd until it exits: the pid counts as soon as its JSON object is complete.
      if (text.includes("}")) done();
    });
    info.once("end", done);
    info.once("close", done);
    info.once("error", done);
  });
}

/** Whether `pid` has a child now (Linux: /proc/<pid>/task/<pid>/children); true when it cannot tell. */
function hasChildren(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim() !== "";
  } catch {
    return true; // Gone, or no such file on this kernel: leave it to the grace and SIGKILL.
  }
}

/** `monitor` with a `kill` that reaches the sandbox (see the module comment). */
export function sandboxProcess(
  monitor: SpawnedProcess,
  childPid: Promise<number | undefined>,
): SpawnedProcess {
  let sandboxPid: number | undefined;
  let known = false;
  // Once bwrap exited its namespace is gone, and the init's pid may already be someone else's.
  let ended = false;
  void monitor.exited.then(() => {
    ended = true;
  });
  void childPid.then((pid) => {
    sandboxPid = pid;
    known = true;
  });
  const signalSandbox = (signal: NodeJS.Signals, pid: number | undefined) => {
    if (ended) return;
    if (pid === undefined) {
      monitor.kill(signal); // bwrap never started a sandbox: the monitor is all there is.
      return;
    }
    killGroup(pid, signal);
    // The init ignores a catchable signal from outside; before it started the command (a kill right
    // after the start) there is nothing to end gracefully, so it goes at once rather than at the grace.
    if (signal === "SIGKILL" || !hasChildren(pid)) {
      try {
        process.kill(pid, "SIGKILL"); // The init: its end ends every process of the namespace.
      } catch {
        // ESRCH: already gone.
      }
      monitor.kill("SIGKILL");
    }
  };
  return {
    get pid() {
      return monitor.pid;
    },
    stdout: monitor.stdout,
    stderr: monitor.stderr,
    exited: monitor.exited,
    write: (data) => monitor.write(data),
    closeStdin: () => monitor.closeStdin(),
    kill(signal = "SIGTERM") {
      if (known) {
        signalSandbox(signal, sandboxPid);
        return;
      }
      // Killed while bwrap sets up: wait for its init's pid (or its end), never orphan the init.
      void Promise.race([childPid, sleep(INFO_WAIT_MS).then(() => undefined)]).then((pid) =>
        signalSandbox(signal, pid),
      );
    },
  };
}
