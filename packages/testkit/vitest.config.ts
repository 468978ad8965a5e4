import { defineConfig } from "vitest/config"
import { config } from "../../vitest.shared.ts"

// Live-target runs (test/live) have their own config: they need a URL.
export default defineConfig(config({ exclude: ["test/live/**"] }))
