/** The state file as CLI commands open it (beside a running gateway, which stays its one writer). */
import { join } from "node:path";
import { SqliteState } from "../../sessions/index.js";
import type { HeraldConfig } from "../config.js";

/** Opens `HERALD_HOME/state.db`; the caller closes it. */
export function openState(cfg: HeraldConfig): SqliteState {
  return SqliteState.open(join(cfg.homeDir, "state.db"), { groupMode: cfg.sessions.groupSessions });
}
