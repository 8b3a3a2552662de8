import { describe, expect, it } from 'vitest';
import {
  compactText,
  elementSpans,
  memberSpan,
  memberSpans,
  rootSpan,
} from '../../../functions/core/json-text.ts';

const slice = (text: string, span: { start: number; end: number }) => text.slice(span.start, span.end);

describe('json-text', () => {
  it('finds array elements whose strings hold brackets, commas and escaped quotes', () => {
    const text = ' [ {"a":"x]\\",{"} , [1,[2]] ,"s\\\\" , -1.5e+3, true ,null ] ';

    const spans = elementSpans(text, rootSpan(text));

    expect(spans.map((span) => slice(text, span))).toEqual([
      '{"a":"x]\\",{"}',
      '[1,[2]]',
      '"s\\\\"',
      '-1.5e+3',
      'true',
      'null',
    ]);
  });

  it('lists members in order, duplicates included, and decodes escaped keys', () => {
    const text = '{"k":1, "\\u006b":2 ,"o":{"k":3}}';

    const members = memberSpans(text, rootSpan(text));

    expect(members.map((m) => [m.key, slice(text, m.value)])).toEqual([
      ['k', '1'],
      ['k', '2'],
      ['o', '{"k":3}'],
    ]);
    expect(slice(text, memberSpan(text, rootSpan(text), 'k')!)).toBe('2');
    expect(memberSpan(text, rootSpan(text), 'missing')).toBeUndefined();
  });

  it('drops whitespace between tokens only, never inside strings', () => {
    const text = '{ "a" : [ 1 ,\n\t2.50 ] , "b" : " x  y " }';

    expect(compactText(text, rootSpan(text))).toBe('{"a":[1,2.50],"b":" x  y "}');
  });

  it('returns compact text as one slice', () => {
    const text = '{"a":[1,2],"b":"c"}';

    expect(compactText(text, rootSpan(text))).toBe(text);
  });

  it('finds empty containers and nested empties', () => {
    const text = '{"a":[],"b":{},"c":[{}, []]}';

    expect(memberSpans(text, rootSpan(text)).map((m) => slice(text, m.value))).toEqual([
      '[]',
      '{}',
      '[{}, []]',
    ]);
    expect(elementSpans(text, memberSpan(text, rootSpan(text), 'a')!)).toEqual([]);
  });
});
