#!/usr/bin/env python3
"""Statement parameters of MATCH_RECOGNIZE through the extended query
protocol, as drivers (psycopg, JDBC) send them: Parse with unspecified
parameter types, Bind with text values, Execute; with custom and generic
plans, through the MatchRecognize node and the function.

A minimal protocol v3 client (no driver needed) for the PG* server: trust,
password, md5 or SCRAM-SHA-256 authentication (PGPASSWORD).  Usage: extended_params.py
It creates and uses its own database, mr_protocol.  Exit status 0 when every
check passes.
"""
import base64
import hashlib
import hmac
import os
import socket
import struct
import subprocess
import sys

DB = 'mr_protocol'


def psql(db, sql):
    return subprocess.run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-At', '-d', db, '-c', sql],
                          capture_output=True, text=True)


class Conn:
    def __init__(self, db):
        host = os.environ.get('PGHOST', '/tmp')
        port = int(os.environ.get('PGPORT', '5432'))
        user = os.environ.get('PGUSER', os.environ.get('USER', 'postgres'))
        if host.startswith('/'):
            self.s = socket.socket(socket.AF_UNIX)
            self.s.connect(os.path.join(host, '.s.PGSQL.%d' % port))
        else:
            self.s = socket.create_connection((host, port))
        body = struct.pack('!i', 196608)
        for k, v in (('user', user), ('database', db)):
            body += k.encode() + b'\0' + v.encode() + b'\0'
        body += b'\0'
        self.s.sendall(struct.pack('!i', len(body) + 4) + body)
        password = os.environ.get('PGPASSWORD', '')
        nonce = base64.b64encode(os.urandom(18)).decode()
        while True:
            t, data = self.read()
            code = struct.unpack('!i', data[:4])[0] if t == b'R' else None
            if code == 3:
                self.send(b'p', password.encode() + b'\0')
            elif code == 5:
                inner = hashlib.md5((password + user).encode()).hexdigest()
                self.send(b'p', b'md5' + hashlib.md5(inner.encode() + data[4:8]).hexdigest().encode() + b'\0')
            elif code == 10:
                first_bare = 'n=,r=' + nonce
                msg = ('n,,' + first_bare).encode()
                self.send(b'p', b'SCRAM-SHA-256\0' + struct.pack('!i', len(msg)) + msg)
            elif code == 11:
                server_first = data[4:].decode()
                attrs = dict(kv.split('=', 1) for kv in server_first.split(','))
                salted = hashlib.pbkdf2_hmac('sha256', password.encode(),
                                             base64.b64decode(attrs['s']), int(attrs['i']))
                client_key = hmac.new(salted, b'Client Key', hashlib.sha256).digest()
                stored = hashlib.sha256(client_key).digest()
                final_bare = 'c=biws,r=' + attrs['r']
                auth = ','.join((first_bare, server_first, final_bare)).encode()
                sig = hmac.new(stored, auth, hashlib.sha256).digest()
                proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, sig))).decode()
                self.send(b'p', (final_bare + ',p=' + proof).encode())
            elif code not in (None, 0, 12):
                sys.exit('extended_params: authentication method %d is not supported' % code)
            if t == b'E':
                sys.exit('extended_params: ' + self.error(data)[1])
            if t == b'Z':
                break

    def recv(self, n):
        buf = b''
        while len(buf) < n:
            chunk = self.s.recv(n - len(buf))
            if not chunk:
                raise EOFError('connection closed')
            buf += chunk
        return buf

    def read(self):
        t = self.recv(1)
        n = struct.unpack('!i', self.recv(4))[0]
        return t, self.recv(n - 4)

    def send(self, t, body):
        self.s.sendall(t + struct.pack('!i', len(body) + 4) + body)

    @staticmethod
    def error(data):
        fields = {}
        for f in data.split(b'\0'):
            if f:
                fields[chr(f[0])] = f[1:].decode()
        return fields.get('C', ''), fields.get('M', '')

    def simple(self, sql):
        self.send(b'Q', sql.encode() + b'\0')
        err = None
        while True:
            t, data = self.read()
            if t == b'E':
                err = self.error(data)
            if t == b'Z':
                return err

    def prepare(self, name, sql, ntypes):
        """Parse with ntypes unspecified types; the types the server deduced"""
        body = name.encode() + b'\0' + sql.encode() + b'\0' + struct.pack('!h', ntypes)
        body += struct.pack('!i', 0) * ntypes
        self.send(b'P', body)
        self.send(b'D', b'S' + name.encode() + b'\0')
        self.send(b'S', b'')
        types, err = None, None
        while True:
            t, data = self.read()
            if t == b't':
                n = struct.unpack('!h', data[:2])[0]
                types = list(struct.unpack('!%di' % n, data[2:2 + 4 * n]))
            elif t == b'E':
                err = self.error(data)
            elif t == b'Z':
                return types, err

    def execute(self, name, values):
        """Bind text values (None = NULL), Execute; the rows as tuples of text"""
        body = b'\0' + name.encode() + b'\0' + struct.pack('!h', 0) + struct.pack('!h', len(values))
        for v in values:
            if v is None:
                body += struct.pack('!i', -1)
            else:
                b = str(v).encode()
                body += struct.pack('!i', len(b)) + b
        body += struct.pack('!h', 0)
        self.send(b'B', body)
        self.send(b'E', b'\0' + struct.pack('!i', 0))
        self.send(b'S', b'')
        rows, err = [], None
        while True:
            t, data = self.read()
            if t == b'D':
                n = struct.unpack('!h', data[:2])[0]
                pos, row = 2, []
                for _ in range(n):
                    ln = struct.unpack('!i', data[pos:pos + 4])[0]
                    pos += 4
                    if ln < 0:
                        row.append(None)
                    else:
                        row.append(data[pos:pos + ln].decode())
                        pos += ln
                rows.append(tuple(row))
            elif t == b'E':
                err = self.error(data)
            elif t == b'Z':
                return rows, err


failures = 0


def check(what, ok, detail=''):
    global failures
    print('%s %s%s' % ('ok  ' if ok else 'FAIL', what, (': ' + detail) if detail and not ok else ''))
    if not ok:
        failures += 1


psql('postgres', 'DROP DATABASE IF EXISTS ' + DB)
r = psql('postgres', 'CREATE DATABASE ' + DB)
if r.returncode != 0:
    sys.exit(r.stderr)
r = psql(DB, """
CREATE EXTENSION match_recognize;
CREATE TABLE t (id int, price int, tag text);
INSERT INTO t SELECT g, (g * 7) % 10, 't' || (g % 2) FROM generate_series(1, 30) g;
""")
if r.returncode != 0:
    sys.exit(r.stderr)

clause = """SELECT * FROM t MATCH_RECOGNIZE (ORDER BY id
  MEASURES FIRST(id) AS f, count(*) AS n, $2 || '!' AS msg
  PATTERN (a b+) DEFINE a AS tag = $2, b AS price > $1) AS r"""
sql = psql(DB, "SELECT match_recognize_sql($q$%s$q$)" % clause).stdout.strip()
check('match_recognize_sql passes the parameters typed', '$1::integer, $2::text' in sql, sql)


def expected(p1, p2):
    q = clause.replace('$1', str(int(p1))).replace('$2', "'%s'" % p2)
    out = psql(DB, "SELECT f, n, msg FROM (%s) x" % psql(DB, "SELECT match_recognize_sql($q$%s$q$)" % q).stdout.strip())
    return [tuple(line.split('|')) for line in out.stdout.splitlines()]


c = Conn(DB)
types, err = c.prepare('s1', sql, 2)
check('Parse with unspecified types', err is None, str(err))
check('the server deduces int4 and text', types == [23, 25], str(types))
for mode in ('force_custom_plan', 'force_generic_plan', 'auto'):
    for scan in ('on', 'off'):
        c.simple("SET plan_cache_mode = %s; SET match_recognize.enable_custom_scan = %s" % (mode, scan))
        for p1, p2 in ((5, 't1'), (2, 't0'), (8, 't1'), (5, 't1'), (0, 't0'), (6, 't0'), (3, 't1')):
            rows, err = c.execute('s1', [p1, p2])
            want = expected(p1, p2)
            check('%s, custom scan %s, $1=%s $2=%s' % (mode, scan, p1, p2),
                  err is None and rows == want, 'got %r %r, want %r' % (rows, err, want))
c.simple('RESET plan_cache_mode; RESET match_recognize.enable_custom_scan')

# a null value: "price > NULL" holds for no row
rows, err = c.execute('s1', [None, 't1'])
check('a null parameter', err is None and rows == [], '%r %r' % (rows, err))

# match_recognize() called directly with an untyped parameter: the driver
# must give a type (as for any "any" argument), it is never guessed
types, err = c.prepare('s2', "SELECT * FROM match_recognize($$ t MATCH_RECOGNIZE (ORDER BY id "
                       "MEASURES count(*) AS n PATTERN (a+) DEFINE a AS price > $1) $$, $1) AS r(n bigint)", 1)
check('an untyped parameter of match_recognize() is an error', err is not None and err[0] == '42P18', str(err))
types, err = c.prepare('s3', "SELECT * FROM match_recognize($$ t MATCH_RECOGNIZE (ORDER BY id "
                       "MEASURES count(*) AS n PATTERN (a+) DEFINE a AS price > $1) $$, $1::int) AS r(n bigint)", 1)
rows, err = c.execute('s3', [4])
want = psql(DB, "SELECT n FROM match_recognize($$ t MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) AS n "
                "PATTERN (a+) DEFINE a AS price > 4) $$) AS r(n bigint)").stdout.split()
check('a typed parameter of match_recognize()', err is None and [r[0] for r in rows] == want,
      '%r %r %r' % (rows, err, want))
# a parameter the clause does not have
types, err = c.prepare('s4', "SELECT * FROM match_recognize($$ t MATCH_RECOGNIZE (ORDER BY id "
                       "MEASURES count(*) AS n PATTERN (a+) DEFINE a AS price > $2) $$, $1::int) AS r(n bigint)", 1)
rows, err = c.execute('s4', [4])
check('a parameter the call does not pass is an error', err is not None and err[0] == '42P02', str(err))

c.send(b'X', b'')
psql('postgres', 'DROP DATABASE ' + DB)
print('extended_params: %s' % ('all checks passed' if failures == 0 else '%d checks FAILED' % failures))
sys.exit(1 if failures else 0)
