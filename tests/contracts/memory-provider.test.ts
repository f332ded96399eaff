/** Runs the MemoryProvider contract against Honcho and Mem0, each on its fake API. */
import { createHonchoProvider } from "../../agent/tools/memory-providers/honcho.js";
import { createMem0Provider } from "../../agent/tools/memory-providers/mem0.js";
import { startFakeHoncho } from "../fakes/honcho/index.js";
import { startFakeMem0 } from "../fakes/mem0/index.js";
import { memoryProviderContract } from "./memory-provider.contract.js";

memoryProviderContract("Honcho", async () => {
  // It concludes from what a peer said in the workspace, so each agent's insights show what it heard.
  const fake = await startFakeHoncho({ apiKey: "hk", learns: true });
  return {
    make: (apiKey = "hk") =>
      createHonchoProvider({
        baseUrl: fake.url,
        apiKey,
        workspace: "herald",
        assistantPeer: "herald",
        timeoutMs: 5000,
      }),
    received: (peer) =>
      [...fake.sessions("herald").keys()]
        .flatMap((s) => fake.messages("herald", s))
        .filter((m) => m.peer_id === peer)
        .map((m) => m.content),
    teach: (peer, text) => fake.know(peer, text),
    down: () => fake.down(),
    close: () => fake.close(),
  };
});

memoryProviderContract("Mem0", async () => {
  const fake = await startFakeMem0({ apiKey: "mk" });
  return {
    make: (apiKey = "mk") =>
      createMem0Provider({ baseUrl: fake.url, apiKey, agentId: "herald", timeoutMs: 5000 }),
    received: (userId) => fake.memories.filter((m) => m.user_id === userId && m.run_id).map((m) => m.memory),
    teach: (userId, text) => fake.remember(userId, text, "herald"),
    down: () => fake.down(),
    close: () => fake.close(),
  };
});
