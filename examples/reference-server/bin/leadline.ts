#!/usr/bin/env node
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { Command } from "effect/cli"
import packageJson from "../package.json" with { type: "json" }
import { leadline } from "../src/cli/Commands.ts"
import { runMain } from "../src/RunMain.ts"

runMain(leadline.pipe(Command.run({ version: packageJson.version }), Effect.provide(NodeServices.layer)))
