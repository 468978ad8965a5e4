/** A setup request: POSTs `body` as JSON with a bearer token and answers the parsed body; anything but 2xx throws. */
export const post = async (url: string, path: string, auth: string, body: unknown): Promise<any> => {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${auth}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const json = await response.json()
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}
