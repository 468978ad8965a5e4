#!/usr/bin/env node
import * as Relaunch from "../Relaunch.ts"

// The commands that run for long relaunch first, before the CLI's modules are loaded (src/Relaunch.ts);
// the quick ones do not pay for it.
if (process.argv[2] === "serve" || process.argv[2] === "worker") Relaunch.withMallocTrim()
const [NodeServices, { Effect }, { Command }, { leadline }, { runMain }, { VERSION }] = await Promise.all([
  import("@effect/platform-node/NodeServices"),
  import("effect"),
  import("effect/cli"),
  import("../cli/Commands.ts"),
  import("../RunMain.ts"),
  import("../Version.ts")
])

runMain(leadline.pipe(Command.run({ version: VERSION }), Effect.provide(NodeServices.layer)))
