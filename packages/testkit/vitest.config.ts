import { defineConfig } from "vitest/config"
import { shared } from "../../vitest.shared.ts"

// Live-target runs (test/live) have their own config: they need a URL.
export default defineConfig({ test: { ...shared, include: ["test/**/*.test.ts"], exclude: ["test/live/**"] } })
