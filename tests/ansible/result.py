#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Read what the nt_json callback (callback_plugins/nt_json.py) wrote.

  result.py FILE stats HOST KEY            a number of the play recap (changed, failures, ok, ...)
  result.py FILE task TASK HOST EXPR       EXPR (Python, the result as r) on HOST's result of the
                                           task named TASK (the last one run)
  result.py FILE batches                   the hosts of each batch, one line a batch

Prints the value as JSON; exits 3 when the task or host is not there."""
import json
import sys


def main():
    doc = json.load(open(sys.argv[1]))
    what = sys.argv[2]
    if what == 'stats':
        print(json.dumps(doc['stats'].get(sys.argv[3], {}).get(sys.argv[4], 0)))
        return 0
    if what == 'batches':
        batches = {}
        for x in doc['results']:
            batches.setdefault(x['play'], [])
            if x['host'] not in batches[x['play']]:
                batches[x['play']].append(x['host'])
        for k in sorted(batches):
            print(','.join(sorted(batches[k])))
        return 0
    task, host, expr = sys.argv[3], sys.argv[4], sys.argv[5]
    found = None
    for x in doc['results']:
        if x['task'] == task and x['host'] == host:
            found = x['result']
    if found is None:
        print('no result of task %r for %s' % (task, host), file=sys.stderr)
        return 3
    print(json.dumps(eval(expr, {}, {'r': found})))
    return 0


sys.exit(main())
