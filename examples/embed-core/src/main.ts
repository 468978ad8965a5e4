import { Effect } from "effect"
import * as Crm from "./Crm.ts"

const { lead, page, refused } = await Effect.runPromise(Crm.demo.pipe(Effect.provide(Crm.layer)))
console.log("created", lead.id, lead.phone)
console.log("the reader sees", page.meta.total, "lead(s)")
console.log("the reader may not delete:", refused._tag, refused._tag === "PermissionDenied" ? refused.required : "")
