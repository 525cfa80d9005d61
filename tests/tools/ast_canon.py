#!/usr/bin/env python3
"""Prints CPython's syntax tree of Python files in kiln's canonical form.

kiln's compiler/frontend/ast_dump.cpp prints kiln's tree in the same form, so
tests/stdlib_parse_test.cpp can check kiln's parser against CPython's on every
file of the standard library: both sides are printed, then compared as text.

Usage:
  ast_canon.py FILE            the canonical dump of one file
  ast_canon.py --stdlib        every .py file of this interpreter's standard
                               library (site-packages and dist-packages left
                               out): a line '@ROOT <dir>', then for each file
                               '### <path relative to ROOT>' and its dump, or
                               '!SKIP <reason>' when CPython cannot parse it

The form: one statement per line, indented two spaces per nesting level, as
`Kind@line:col(field, field, ...)`, where col is CPython's col_offset (bytes
from the start of the line). Fields are CPython's, in CPython's order; a
field holding statements (body, orelse, finalbody, handlers, cases) is not
printed inline but as a line `<name>:` followed by its statements, and only
when it is not empty. Every other node prints as `Kind(field, ...)`; lists
as `[a, b]`; an absent optional field as `~`; strings as '...' with every
character outside printable ASCII, and quote and backslash, as \\u{HEX}
(bytes as \\x{HEX}).

Normalisations, each for something a parser may legitimately represent
differently (kiln's tree keeps what kiln needs, named in ast.hpp):
  1. Locations are printed for statements and except handlers only. kiln's
     expression locations point at the token a diagnostic names (the
     operator of a BinOp, the attribute name of an Attribute), not at the
     first token as CPython's do.
  2. `ctx` (Load/Store/Del) is left out: it follows from where an expression
     stands, and kiln does not store it.
  3. `type_comment` is left out: ast.parse() leaves it None unless asked for
     type comments, and kiln does not read them.
  4. A Constant prints as the kind kiln gives it: Int(n), Float(bits),
     Complex(bits of the imaginary part), Str('...'), Bytes('...'), True,
     False, None or Ellipsis. Floats print as the hexadecimal IEEE-754 bits
     so that neither side formats decimals. Constant.kind (the 'u' of u'')
     is left out: it changes nothing.
  5. A Subscript's slice prints as the list of its indices, a Tuple's
     elements flattened: kiln keeps a subscript's indices as a list, so
     `a[i, j]`, `a[(i, j)]` both print [i, j] and `a[i,]` prints [i].
  6. AnnAssign.simple is left out: it records whether the target was in
     parentheses, which kiln does not keep.
  7. ImportFrom's level prints as that many dots before the module name,
     which is how kiln keeps it.
  8. A JoinedStr's empty Constant parts are left out: CPython 3.12 leaves
     some in format specs (f'{x:{y}}'), 3.11 does not, and they mean nothing.
  9. FunctionDef, AsyncFunctionDef and ClassDef always print type_params
     (before Python 3.12 ast has no such field: it prints []); TypeVar's
     default_value (Python 3.13) is left out, as 3.12 has none.
"""

import ast
import os
import struct
import sys
import sysconfig

DROPPED = {'ctx', 'type_comment', 'kind', 'default_value'}
BLOCKS = ('body', 'orelse', 'finalbody', 'handlers', 'cases')
TYPE_PARAM_OWNERS = ('FunctionDef', 'AsyncFunctionDef', 'ClassDef')


def quote(text):
    out = ["'"]
    for ch in text:
        cp = ord(ch)
        if 0x20 <= cp < 0x7F and ch not in "'\\":
            out.append(ch)
        else:
            out.append('\\u{%X}' % cp)
    out.append("'")
    return ''.join(out)


def quote_bytes(data):
    out = ["'"]
    for b in data:
        if 0x20 <= b < 0x7F and b not in b"'\\":
            out.append(chr(b))
        else:
            out.append('\\x{%X}' % b)
    out.append("'")
    return ''.join(out)


def float_bits(value):
    return '%x' % struct.unpack('<Q', struct.pack('<d', value))[0]


def constant(value):
    if value is None or value is True or value is False:
        return repr(value)
    if value is Ellipsis:
        return 'Ellipsis'
    if isinstance(value, int):
        return 'Int(%d)' % value
    if isinstance(value, float):
        return 'Float(%s)' % float_bits(value)
    if isinstance(value, complex):
        return 'Complex(%s)' % float_bits(value.imag)
    if isinstance(value, str):
        return 'Str(%s)' % quote(value)
    if isinstance(value, bytes):
        return 'Bytes(%s)' % quote_bytes(value)
    raise TypeError('unexpected constant %r' % (value,))


def fields(node):
    name = type(node).__name__
    names = [f for f in node._fields if f not in DROPPED]
    if name == 'AnnAssign':
        names.remove('simple')
    if name == 'ImportFrom':
        names.remove('level')
    if name in TYPE_PARAM_OWNERS and 'type_params' not in names:
        names.append('type_params')
    return names


def field_value(node, name):
    if name == 'type_params':
        return getattr(node, 'type_params', [])
    value = getattr(node, name)
    if isinstance(node, ast.Subscript) and name == 'slice':
        return value.elts if isinstance(value, ast.Tuple) else [value]
    if isinstance(node, ast.ImportFrom) and name == 'module':
        return '.' * (node.level or 0) + (value or '')
    if isinstance(node, ast.JoinedStr) and name == 'values':
        return [v for v in value
                if not (isinstance(v, ast.Constant) and v.value == '')]
    return value


def expr(value):
    if value is None:
        return '~'
    if isinstance(value, list):
        return '[' + ', '.join(expr(v) for v in value) + ']'
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, ast.Constant):
        return constant(value.value)
    if isinstance(value, ast.MatchSingleton):  # its value is not a node
        return 'MatchSingleton(%s)' % constant(value.value)
    names = fields(value)
    if not names:  # operators, boolean operators, comparison operators
        return type(value).__name__
    return '%s(%s)' % (type(value).__name__,
                       ', '.join(expr(field_value(value, n)) for n in names))


def statement(node, depth, out):
    indent = '  ' * depth
    names = fields(node)
    inline = [n for n in names if n not in BLOCKS]
    head = type(node).__name__
    if hasattr(node, 'lineno'):
        head += '@%d:%d' % (node.lineno, node.col_offset)
    out.append('%s%s(%s)' % (indent, head,
                             ', '.join(expr(field_value(node, n)) for n in inline)))
    for name in names:
        if name in BLOCKS and getattr(node, name):
            out.append('%s  %s:' % (indent, name))
            for child in getattr(node, name):
                statement(child, depth + 2, out)


def dump(source):
    out = []
    for node in ast.parse(source).body:
        statement(node, 0, out)
    return ''.join(line + '\n' for line in out)


def stdlib_files(root):
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs
                            if d not in ('site-packages', 'dist-packages', '__pycache__'))
        for name in sorted(files):
            if name.endswith('.py'):
                yield os.path.join(directory, name)


def main(argv):
    if hasattr(sys, 'set_int_max_str_digits'):
        sys.set_int_max_str_digits(0)
    out = sys.stdout
    if argv[1:] == ['--stdlib']:
        root = sysconfig.get_paths()['stdlib']
        out.write('@ROOT %s\n' % root)
        for path in stdlib_files(root):
            out.write('### %s\n' % os.path.relpath(path, root))
            with open(path, 'rb') as f:
                source = f.read()
            try:
                text = dump(source)
            except (SyntaxError, ValueError) as e:
                text = '!SKIP %s: %s\n' % (type(e).__name__, str(e).replace('\n', ' '))
            out.write(text)
        return 0
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], 'rb') as f:
        out.write(dump(f.read()))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
