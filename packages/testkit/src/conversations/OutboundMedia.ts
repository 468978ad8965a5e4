import type { Target } from "../TestServer.ts"

/** A file to upload: its bytes, content type and filename as the form part says them. */
export interface Upload {
  readonly bytes: Uint8Array
  readonly contentType: string
  readonly filename?: string | undefined
  /** The optional `type` part. */
  readonly type?: string | undefined
}

/** A small PNG-typed file (the bytes are not checked: the content type is the caller's word). */
export const pngFile = (size = 2048, filename = "photo.png"): Upload => ({
  bytes: new Uint8Array(size).map((_, i) => i % 251),
  contentType: "image/png",
  filename
})

/** A WebP image: what WhatsApp sends as a sticker. */
export const webpFile = (size = 4096, filename = "wave.webp"): Upload => ({
  bytes: new Uint8Array(size).map((_, i) => (i * 3) % 241),
  contentType: "image/webp",
  filename
})

export const pdfFile = (size = 4096, filename = "invoice.pdf"): Upload => ({
  bytes: new Uint8Array(size).map((_, i) => (i * 7) % 253),
  contentType: "application/pdf",
  filename
})

/** The form of an upload: the optional `type`, any `extra` parts, then the file. */
export const formOf = (file: Upload | undefined, extra: Readonly<Record<string, string>> = {}): FormData => {
  const form = new FormData()
  if (file?.type !== undefined) form.append("type", file.type)
  for (const [name, value] of Object.entries(extra)) form.append(name, value)
  if (file !== undefined) {
    form.append(
      "file",
      new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.contentType }),
      file.filename ?? ""
    )
  }
  return form
}

/** `POST /api/v1/media` as a browser's form would send it; the answer's status and JSON body. */
export const upload = async (
  target: Target,
  key: string,
  file: Upload | undefined,
  extra: Readonly<Record<string, string>> = {}
) => {
  const response = await fetch(`${target.baseUrl}/api/v1/media`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: formOf(file, extra)
  })
  const text = await response.text()
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, text, body }
}
