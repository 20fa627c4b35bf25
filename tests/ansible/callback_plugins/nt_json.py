# SPDX-License-Identifier: Apache-2.0
# -*- coding: utf-8 -*-
# A test-only callback: every task result and the play recap as one JSON
# document in the file named by NT_ANSIBLE_JSON, beside Ansible's usual
# output (ansible-core itself has no JSON callback; ansible.posix's is not in
# Debian's ansible-core). tests/ansible/result.py reads it.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = '''
name: nt_json
type: aggregate
short_description: task results as JSON into $NT_ANSIBLE_JSON (nettune tests)
description: Task results and the recap as JSON into the file named by NT_ANSIBLE_JSON.
requirements:
  - enabled in callbacks_enabled
'''

import json
import os

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'nt_json'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self.plays = -1
        self.results = []

    def v2_playbook_on_play_start(self, play):
        # Called once a batch when the play has serial.
        self.plays += 1

    def _record(self, result, status):
        self.results.append(dict(play=self.plays, task=result._task.name, host=result._host.get_name(),
                                 status=status, result=result._result))

    def v2_runner_on_ok(self, result):
        self._record(result, 'ok')

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, 'failed')

    def v2_runner_on_skipped(self, result):
        self._record(result, 'skipped')

    def v2_runner_on_unreachable(self, result):
        self._record(result, 'unreachable')

    def v2_playbook_on_stats(self, stats):
        out = dict(results=self.results,
                   stats=dict((h, stats.summarize(h)) for h in sorted(stats.processed.keys())))
        path = os.environ.get('NT_ANSIBLE_JSON')
        if path:
            with open(path, 'w') as f:
                json.dump(out, f, default=str)
