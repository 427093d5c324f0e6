/**
 * Reads back a PDF the service printed (Chromium's, through Skia): its pages and the text each
 * page shows, without a PDF library. Enough of the format for that producer: indirect objects,
 * Flate streams, `Type0` fonts with a `ToUnicode` CMap, and the `Tf`/`Tj`/`TJ` operators of the
 * page content. Text drawn by a font without a CMap reads as nothing (never as wrong letters).
 */

export interface PdfText {
  /** Pages in document order (the page tree's leaves as they appear). */
  pages: string[];
  /** The page tree's own `/Count`. */
  count: number;
}

interface PdfObject {
  dict: string;
  stream: Uint8Array | null;
}

const latin1 = new TextDecoder("latin1");

async function inflate(bytes: Uint8Array): Promise<Uint8Array> {
  const out = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
    new DecompressionStream("deflate"),
  );
  return new Uint8Array(await new Response(out).arrayBuffer());
}

async function objectsOf(pdf: Uint8Array): Promise<Map<number, PdfObject>> {
  const text = latin1.decode(pdf);
  const objects = new Map<number, PdfObject>();
  const re = /(\d+) 0 obj\s*/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    const start = re.lastIndex;
    const end = text.indexOf("endobj", start);
    if (end < 0) break;
    const body = text.slice(start, end);
    const s = body.indexOf("stream");
    let stream: Uint8Array | null = null;
    let dict = body;
    if (s >= 0 && /^\s*<</.test(body)) {
      dict = body.slice(0, s);
      let from = start + s + "stream".length;
      if (text[from] === "\r") from++;
      if (text[from] === "\n") from++;
      const to = text.lastIndexOf("endstream", end);
      let raw = pdf.subarray(from, to);
      while (raw.length && (raw[raw.length - 1] === 0x0a || raw[raw.length - 1] === 0x0d)) {
        raw = raw.subarray(0, raw.length - 1);
      }
      stream = /\/Filter\s*\/FlateDecode/.test(dict) ? await inflate(raw) : raw;
    }
    objects.set(Number(m[1]), { dict, stream });
    re.lastIndex = end;
  }
  return objects;
}

function refs(value: string): number[] {
  return [...value.matchAll(/(\d+) 0 R/g)].map((r) => Number(r[1]));
}

/** A ToUnicode CMap: glyph code (hex) to text. */
function parseCMap(cmap: string): Map<string, string> {
  const map = new Map<string, string>();
  const utf16 = (hex: string) => {
    let s = "";
    for (let i = 0; i + 4 <= hex.length; i += 4) {
      s += String.fromCharCode(parseInt(hex.slice(i, i + 4), 16));
    }
    return s;
  };
  for (const block of cmap.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
    for (const [, code, uni] of block[1].matchAll(/<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>/g)) {
      map.set(code.toUpperCase(), utf16(uni));
    }
  }
  for (const block of cmap.matchAll(/beginbfrange([\s\S]*?)endbfrange/g)) {
    const re = /<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*(<([0-9A-Fa-f]+)>|\[([^\]]*)\])/g;
    for (const r of block[1].matchAll(re)) {
      const lo = parseInt(r[1], 16), hi = parseInt(r[2], 16);
      const width = r[1].length;
      const list = r[5] ? [...r[5].matchAll(/<([0-9A-Fa-f]+)>/g)].map((x) => x[1]) : null;
      for (let c = lo; c <= hi; c++) {
        const code = c.toString(16).toUpperCase().padStart(width, "0");
        if (list) map.set(code, utf16(list[c - lo] ?? ""));
        else {
          const base = parseInt(r[4], 16) + (c - lo);
          map.set(code, utf16(base.toString(16).padStart(r[4].length, "0")));
        }
      }
    }
  }
  return map;
}

/** The text one content stream draws, a space between text objects. */
function drawnText(content: string, fonts: Map<string, Map<string, string>>): string {
  let font: Map<string, string> | undefined;
  let out = "";
  const decode = (hex: string) => {
    if (!font) return "";
    const width = [...font.keys()][0]?.length ?? 4;
    let s = "";
    for (let i = 0; i + width <= hex.length; i += width) {
      s += font.get(hex.slice(i, i + width).toUpperCase()) ?? "";
    }
    return s;
  };
  const re =
    /\/([A-Za-z0-9_.]+)\s+[\d.]+\s+Tf|<([0-9A-Fa-f\s]*)>\s*Tj|\[((?:[^\]\\]|\\.)*)\]\s*TJ|\bET\b/g;
  for (const m of content.matchAll(re)) {
    if (m[1]) font = fonts.get(m[1]);
    else if (m[2] !== undefined) out += decode(m[2].replace(/\s/g, ""));
    else if (m[3] !== undefined) {
      for (const part of m[3].matchAll(/<([0-9A-Fa-f\s]*)>|(-?[\d.]+)/g)) {
        if (part[1] !== undefined) out += decode(part[1].replace(/\s/g, ""));
        else if (Number(part[2]) < -200) out += " ";
      }
    } else out += " ";
  }
  return out;
}

/** The pages of `pdf` and the text each shows. */
export async function readPdf(pdf: Uint8Array): Promise<PdfText> {
  if (latin1.decode(pdf.subarray(0, 5)) !== "%PDF-") throw new Error("not a PDF");
  const objects = await objectsOf(pdf);
  const cmaps = new Map<number, Map<string, string>>();
  const fontMap = (id: number) => {
    if (!cmaps.has(id)) {
      const font = objects.get(id);
      const uni = font?.dict.match(/\/ToUnicode\s+(\d+) 0 R/);
      const stream = uni ? objects.get(Number(uni[1]))?.stream : null;
      cmaps.set(id, stream ? parseCMap(latin1.decode(stream)) : new Map());
    }
    return cmaps.get(id)!;
  };
  const pages: string[] = [];
  let count = 0;
  for (const [, o] of objects) {
    const total = o.dict.match(/\/Type\s*\/Pages\b[\s\S]*?\/Count\s+(\d+)/) ??
      o.dict.match(/\/Count\s+(\d+)[\s\S]*?\/Type\s*\/Pages\b/);
    if (total && !/\/Parent/.test(o.dict)) count = Number(total[1]);
    if (!/\/Type\s*\/Page(?![s\w])/.test(o.dict)) continue;
    const fonts = new Map<string, Map<string, string>>();
    const fontDict = o.dict.match(/\/Font\s*<<([^>]*)>>/);
    for (const [, name, id] of fontDict?.[1].matchAll(/\/([A-Za-z0-9_.]+)\s+(\d+) 0 R/g) ?? []) {
      fonts.set(name, fontMap(Number(id)));
    }
    const contents = o.dict.match(/\/Contents\s+(\[[^\]]*\]|\d+ 0 R)/);
    let text = "";
    for (const id of refs(contents?.[1] ?? "")) {
      const stream = objects.get(id)?.stream;
      if (stream) text += drawnText(latin1.decode(stream), fonts);
    }
    pages.push(text.replace(/\s+/g, " ").trim());
  }
  return { pages, count };
}
