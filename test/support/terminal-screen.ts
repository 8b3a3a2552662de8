/**
 * A terminal screen for tests of lines redrawn in place: a stream that says it is a TTY and keeps
 * what a person would see, applying the cursor and erase sequences log-update writes (erase line,
 * cursor up, cursor to a column) to a grid of lines. Colours and other sequences are ignored.
 */
import { Writable } from 'node:stream';

const ESC = '\u001b';

export class TerminalScreen {
  readonly #lines: string[] = [''];
  #row = 0;
  #column = 0;

  /** A TTY stream of `columns` × `rows` drawing on this screen. */
  stream(columns = 120, rows = 40): Writable & { isTTY: true; columns: number; rows: number } {
    const writable = new Writable({
      write: (chunk: Buffer | string, _encoding, done) => {
        this.write(chunk.toString());
        done();
      },
    });
    return Object.assign(writable, { isTTY: true as const, columns, rows });
  }

  /** What the screen shows, one entry per line, trailing empty lines left out. */
  lines(): string[] {
    const lines = [...this.#lines];
    while (lines.length > 0 && lines.at(-1) === '') lines.pop();
    return lines;
  }

  write(text: string): void {
    const characters = [...text];
    for (let index = 0; index < characters.length; index += 1) {
      if (characters[index] !== ESC || characters[index + 1] !== '[') {
        this.#print(characters[index]!);
        continue;
      }
      // A control sequence: ESC [ parameters final-letter.
      let end = index + 2;
      while (end < characters.length && !/[A-Za-z]/.test(characters[end]!)) end += 1;
      this.#apply(characters[end] ?? '', characters.slice(index + 2, end).join(''));
      index = end;
    }
  }

  #print(character: string): void {
    if (character === '\n') {
      this.#row += 1;
      this.#column = 0;
      while (this.#lines.length <= this.#row) this.#lines.push('');
      return;
    }
    if (character === '\r') {
      this.#column = 0;
      return;
    }
    const line = this.#lines[this.#row]!.padEnd(this.#column);
    this.#lines[this.#row] = line.slice(0, this.#column) + character + line.slice(this.#column + 1);
    this.#column += 1;
  }

  #apply(command: string, parameter: string): void {
    const count = parameter === '' ? 1 : Number(parameter);
    if (command === 'K' && parameter === '2') this.#lines[this.#row] = '';
    else if (command === 'A') this.#row = Math.max(0, this.#row - count);
    else if (command === 'G') this.#column = count - 1;
  }
}
