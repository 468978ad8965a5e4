import { defineConfig } from "vitest/config"
import { shared } from "../../vitest.shared.ts"

export default defineConfig({ test: { ...shared, include: ["test/**/*.test.ts"] } })
