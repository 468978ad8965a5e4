import * as Relaunch from "./Relaunch.ts"

// `leadline serve` without the CLI: the server's own entry point. The relaunch comes first, before
// the server's modules are loaded, which a relaunched process would load again (src/Relaunch.ts).
Relaunch.withMallocTrim()
const [{ runMain }, { serve }] = await Promise.all([import("./RunMain.ts"), import("./Serve.ts")])
runMain(serve)
