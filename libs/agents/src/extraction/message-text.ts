// The text of a chat message whose content is either a string or a list of content
// parts (LangChain's `MessageContent`). Only text parts count: images, tool_use and
// reasoning parts carry no fenced blocks meant for the tool node.

// Structural, so any LangChain version's content type (and plain objects) fits.
export type MessageContentLike = string | ReadonlyArray<unknown> | null | undefined;

// Text parts are joined with a newline, so a fence that closes one part can never run
// into the first line of the next (providers split text around tool_use parts).
export function messageText(content: MessageContentLike): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') texts.push(part);
    else if (isTextPart(part)) texts.push(part.text);
  }
  return texts.join('\n');
}

function isTextPart(part: unknown): part is { type: 'text'; text: string } {
  if (typeof part !== 'object' || part === null) return false;
  const { type, text } = part as { type?: unknown; text?: unknown };
  return type === 'text' && typeof text === 'string';
}
