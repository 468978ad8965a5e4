import { OpenApi } from "effect/http-api"
import { Api } from "@leadline/http-adapter/Api"
import { writeFileSync } from "node:fs"
writeFileSync("scratch/openapi.json", JSON.stringify(OpenApi.fromApi(Api), null, 2))
