/**
 * The gateway side of the execution backends: what the gateway's commands read of the workspaces
 * (`/usage`'s cloud sandbox hours) without loading a backend. The backends load where turns run.
 */
export { sandboxUsage } from "./cloud-usage.js";
