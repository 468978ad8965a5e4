#!/usr/bin/env node
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { leadline } from "../cli/Commands.ts"
import { runMain } from "../RunMain.ts"
import { VERSION } from "../Version.ts"

runMain(leadline.pipe(Command.run({ version: VERSION }), Effect.provide(NodeServices.layer)))
