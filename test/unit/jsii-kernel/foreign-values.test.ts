/**
 * The jsii kernel client's encoding of values as a foreign language gives them
 * (test/support/jsii-kernel/foreign-values.ts), over a small assembly: what the kernel would take
 * silently (an unknown struct member) is refused here by name and path.
 */
import { describe, expect, it } from 'vitest';
import { type AssemblyTypes, TypeSystem } from '../../support/jsii-kernel/assembly-types.ts';
import {
  decodeValue,
  encodeArguments,
  encodeValue,
  ForeignValueError,
  JsiiEnumValue,
  JsiiObject,
} from '../../support/jsii-kernel/foreign-values.ts';

const FIXTURE: AssemblyTypes = {
  name: 'fixture',
  version: '1.0.0',
  dependencies: {},
  types: {
    'fixture.BaseProps': {
      kind: 'interface',
      fqn: 'fixture.BaseProps',
      datatype: true,
      properties: [{ name: 'name', type: { primitive: 'string' } }],
    },
    'fixture.ThingProps': {
      kind: 'interface',
      fqn: 'fixture.ThingProps',
      datatype: true,
      interfaces: ['fixture.BaseProps'],
      properties: [
        { name: 'size', type: { primitive: 'number' }, optional: true },
        { name: 'mode', type: { fqn: 'fixture.Mode' }, optional: true },
        {
          name: 'labels',
          type: { collection: { kind: 'map', elementtype: { primitive: 'string' } } },
          optional: true,
        },
        {
          name: 'parts',
          type: { collection: { kind: 'array', elementtype: { fqn: 'fixture.Part' } } },
          optional: true,
        },
        { name: 'target', type: { fqn: 'fixture.ITarget' }, optional: true },
        {
          name: 'start',
          type: { union: { types: [{ primitive: 'number' }, { primitive: 'string' }] } },
          optional: true,
        },
        {
          name: 'routes',
          type: { collection: { kind: 'map', elementtype: { fqn: 'fixture.Part' } } },
          optional: true,
        },
      ],
    },
    'fixture.Part': {
      kind: 'interface',
      fqn: 'fixture.Part',
      datatype: true,
      properties: [{ name: 'weight', type: { primitive: 'number' }, optional: true }],
    },
    'fixture.Mode': { kind: 'enum', fqn: 'fixture.Mode', members: [{ name: 'FAST' }, { name: 'SLOW' }] },
    'fixture.ITarget': { kind: 'interface', fqn: 'fixture.ITarget', methods: [{ name: 'aim' }] },
    'fixture.Target': { kind: 'class', fqn: 'fixture.Target', interfaces: ['fixture.ITarget'] },
    'fixture.SpecialTarget': { kind: 'class', fqn: 'fixture.SpecialTarget', base: 'fixture.Target' },
    'fixture.Other': { kind: 'class', fqn: 'fixture.Other' },
    'fixture.Thing': {
      kind: 'class',
      fqn: 'fixture.Thing',
      initializer: {
        parameters: [
          { name: 'id', type: { primitive: 'string' } },
          { name: 'props', type: { fqn: 'fixture.ThingProps' }, optional: true },
        ],
      },
      methods: [
        {
          name: 'addTargets',
          variadic: true,
          parameters: [
            { name: 'first', type: { primitive: 'string' } },
            { name: 'targets', type: { fqn: 'fixture.ITarget' }, variadic: true },
          ],
        },
      ],
    },
  },
};

const types = new TypeSystem();
types.add(FIXTURE);
const props = { fqn: 'fixture.ThingProps' };

describe('encodeValue', () => {
  it('wraps a struct with its fqn, its members and its bases’ encoded: enums by name, maps wrapped, objects by reference', () => {
    const target = new JsiiObject('fixture.SpecialTarget@10001');
    expect(
      encodeValue(
        types,
        props,
        {
          name: 'a',
          size: 2,
          mode: 'SLOW',
          labels: { team: 'payments' },
          parts: [{ weight: 1 }],
          target,
          start: 'latest',
        },
        'props',
      ),
    ).toEqual({
      '$jsii.struct': {
        fqn: 'fixture.ThingProps',
        data: {
          name: 'a',
          size: 2,
          mode: { '$jsii.enum': 'fixture.Mode/SLOW' },
          labels: { '$jsii.map': { team: 'payments' } },
          parts: [{ '$jsii.struct': { fqn: 'fixture.Part', data: { weight: 1 } } }],
          target: { '$jsii.byref': 'fixture.SpecialTarget@10001' },
          start: 'latest',
        },
      },
    });
  });

  it('keeps an empty struct in a map as a struct (plain {} would read as no value)', () => {
    expect(encodeValue(types, props, { name: 'a', routes: { account_status: {} } }, 'props')).toEqual({
      '$jsii.struct': {
        fqn: 'fixture.ThingProps',
        data: {
          name: 'a',
          routes: { '$jsii.map': { account_status: { '$jsii.struct': { fqn: 'fixture.Part', data: {} } } } },
        },
      },
    });
  });

  it('refuses an unknown member, naming it, the struct and the path', () => {
    expect(() => encodeValue(types, props, { name: 'a', sizee: 2 }, 'props')).toThrow(
      new ForeignValueError(
        'props',
        'ThingProps has no member "sizee" (members: name, size, mode, labels, parts, target, start, routes)',
      ),
    );
    expect(() => encodeValue(types, props, { name: 'a', parts: [{}, { wieght: 1 }] }, 'props')).toThrow(
      'props.parts[1]: Part has no member "wieght" (members: weight)',
    );
  });

  it('refuses a missing required member, inherited ones included', () => {
    expect(() => encodeValue(types, props, { size: 2 }, 'props')).toThrow(
      'props: ThingProps requires "name"',
    );
  });

  it('refuses an enum member that does not exist, and a value of the wrong kind', () => {
    expect(() => encodeValue(types, props, { name: 'a', mode: 'fast' }, 'props')).toThrow(
      'props.mode: fixture.Mode has no member "fast" (members: FAST, SLOW)',
    );
    expect(() => encodeValue(types, props, { name: 'a', size: '2' }, 'props')).toThrow(
      'props.size: expected a finite number, got string "2"',
    );
    expect(() => encodeValue(types, props, { name: 'a', start: true }, 'props')).toThrow(
      'props.start: matches no type of the union: expected a finite number, got boolean true; expected a string, got boolean true',
    );
  });

  it('takes an object whose class or declared interfaces reach the declared type, and refuses another', () => {
    const where = { fqn: 'fixture.ITarget' };
    expect(encodeValue(types, where, new JsiiObject('fixture.Target@1'), 'x')).toEqual({
      '$jsii.byref': 'fixture.Target@1',
    });
    expect(encodeValue(types, where, new JsiiObject('Object@2', ['fixture.ITarget']), 'x')).toEqual({
      '$jsii.byref': 'Object@2',
      '$jsii.interfaces': ['fixture.ITarget'],
    });
    expect(() => encodeValue(types, where, new JsiiObject('fixture.Other@3'), 'x')).toThrow(
      'x: expected fixture.ITarget, got fixture.Other@3',
    );
    expect(() => encodeValue(types, where, { aim: 1 }, 'x')).toThrow(
      'x: expected an object of fixture.ITarget (a JsiiObject), got plain data',
    );
  });
});

describe('encodeArguments', () => {
  const thing = types.initializer('fixture.Thing');

  it('leaves out trailing optional arguments and refuses a missing required one or too many', () => {
    expect(encodeArguments(types, thing, ['id'], 'new Thing')).toEqual(['id']);
    expect(encodeArguments(types, thing, ['id', undefined], 'new Thing')).toEqual(['id']);
    expect(() => encodeArguments(types, thing, [], 'new Thing')).toThrow(
      'new Thing(id): required, not given',
    );
    expect(() => encodeArguments(types, thing, ['id', { name: 'a' }, 3], 'new Thing')).toThrow(
      'new Thing: takes at most 2 argument(s), got 3',
    );
  });

  it('gives a variadic parameter every argument after the others, each checked', () => {
    const addTargets = types.method('fixture.Thing', 'addTargets', false)!;
    const targets = [new JsiiObject('fixture.Target@1'), new JsiiObject('fixture.Target@2')];
    expect(encodeArguments(types, addTargets, ['x', ...targets], 'addTargets')).toEqual([
      'x',
      { '$jsii.byref': 'fixture.Target@1' },
      { '$jsii.byref': 'fixture.Target@2' },
    ]);
    expect(() => encodeArguments(types, addTargets, ['x', targets[0], 'nope'], 'addTargets')).toThrow(
      'addTargets(targets[1]): expected an object of fixture.ITarget (a JsiiObject), got string "nope"',
    );
  });
});

describe('decodeValue', () => {
  it('turns references into objects, enums into members, maps into plain data and dates into Dates', () => {
    const decoded = decodeValue({
      ref: { '$jsii.byref': 'fixture.Target@7', '$jsii.interfaces': ['fixture.ITarget'] },
      mode: { '$jsii.enum': 'fixture.Mode/FAST' },
      labels: { '$jsii.map': { team: { '$jsii.byref': 'fixture.Other@8' } } },
      at: { '$jsii.date': '2026-01-02T03:04:05.000Z' },
    }) as Record<string, unknown>;
    expect(decoded.ref).toEqual(new JsiiObject('fixture.Target@7', ['fixture.ITarget']));
    expect((decoded.ref as JsiiObject).fqn).toBe('fixture.Target');
    expect(decoded.mode).toEqual(new JsiiEnumValue('fixture.Mode', 'FAST'));
    expect(decoded.labels).toEqual({ team: new JsiiObject('fixture.Other@8') });
    expect(decoded.at).toEqual(new Date('2026-01-02T03:04:05.000Z'));
  });
});
