/**
 * A turn's attachments in its workspace: copied into `attachments/` through `WorkspaceAccess` (the
 * backend's files, where the commands run) before the turn, so the tools and commands reach them. The
 * gateway never opens a workspace path itself, so a command swapping a folder for a link cannot steer
 * it.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { agentOfKey } from "../../core/chat.js";
import type { TurnJob, TurnOrigin } from "../../core/turn.js";
import type { WorkspaceAccess } from "./access.js";
import type { WorkspaceOwner } from "./workspaces.js";

/**
 * The workspace owner of a tool call (the session, or the user when workspaces are per user). A further
 * agent's name leads the user's key as it leads the session's (`family/telegram:user:1`): a user's
 * workspace with one agent is never their workspace with another.
 */
export function ownerOf(origin: Pick<TurnOrigin, "sessionKey" | "chat" | "userId">): WorkspaceOwner {
  const agent = agentOfKey(origin.sessionKey);
  const userKey = `${agent ? `${agent}/` : ""}${origin.chat.platform}:user:${origin.userId}`;
  return { sessionKey: origin.sessionKey, userKey };
}

/**
 * Copies `job`'s attachments into `<workspace>/attachments/` (names kept, another file of a name
 * numbered) and returns where the model finds each.
 */
export async function copyAttachments(
  access: WorkspaceAccess,
  job: TurnJob,
): Promise<ReadonlyMap<string, string>> {
  const open = await access.open(ownerOf(job.origin));
  const paths = new Map<string, string>();
  for (const attachment of job.input.attachments ?? []) {
    const name = basename(attachment.fileName ?? attachment.path).replace(/[^\w.+-]+/g, "_") || "file";
    const size = (await stat(attachment.path)).size;
    // The same file again (a turn run a second time) keeps its copy; another file of that name is numbered.
    let target = name;
    for (let n = 2; ; n++) {
      const there = await open.files.stat(`attachments/${target}`);
      if (!there || (there.kind === "file" && there.sizeBytes === size)) break;
      target = `${n}-${name}`;
    }
    const rel = `attachments/${target}`;
    // The attachment is the gateway's own file (under HERALD_HOME/cache): read here, written there.
    await open.files.write(rel, createReadStream(attachment.path), { mode: 0o644 });
    paths.set(attachment.path, open.shown(rel));
  }
  return paths;
}
