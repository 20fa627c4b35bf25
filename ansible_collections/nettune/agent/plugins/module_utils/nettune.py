# SPDX-License-Identifier: Apache-2.0
# -*- coding: utf-8 -*-
# The HTTP client of a nettune agent that every module of the collection
# uses. It goes through Ansible's own fetch_url, so proxies, TLS
# verification (on by default), a CA file and client certificates behave as
# in every other Ansible module.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible.module_utils.basic import env_fallback
from ansible.module_utils.urls import fetch_url

DEFAULT_URL = 'http://127.0.0.1:8470'


def agent_argument_spec():
    """The options of plugins/doc_fragments/agent.py."""
    return dict(
        url=dict(type='str', fallback=(env_fallback, ['NETTUNE_URL'])),
        token=dict(type='str', no_log=True, fallback=(env_fallback, ['NETTUNE_TOKEN'])),
        validate_certs=dict(type='bool', default=True),
        ca_path=dict(type='path'),
        client_cert=dict(type='path'),
        client_key=dict(type='path'),
        timeout=dict(type='int', default=60),
    )


def problem_message(status, doc, fallback):
    """One line for an operator from the agent's RFC 9457 problem document:
    its title and detail, then every JSON path the agent named."""
    if not isinstance(doc, dict):
        return 'HTTP %s: %s' % (status, fallback or 'no answer body')
    parts = ['HTTP %s' % status]
    if doc.get('title'):
        parts.append(str(doc['title']))
    msg = ': '.join(parts)
    if doc.get('detail'):
        msg += ': ' + str(doc['detail'])
    errors = doc.get('errors')
    if isinstance(errors, list) and errors:
        msg += ' [' + '; '.join('%s: %s' % (e.get('path', '?'), e.get('message', ''))
                               for e in errors if isinstance(e, dict)) + ']'
    return msg


class NettuneError(Exception):
    """An answer of the agent outside 2xx, or no answer at all."""

    def __init__(self, status, message, problem=None):
        super(NettuneError, self).__init__(message)
        self.status = status
        self.problem = problem


class NettuneClient(object):
    def __init__(self, module):
        self.module = module
        p = module.params
        self.base = (p.get('url') or DEFAULT_URL).rstrip('/')
        self.token = p.get('token')
        self.timeout = p.get('timeout') or 60
        # The CA is for https:// agents only: an http:// agent has no
        # certificate to check, and a CA file named for the fleet must not
        # fail a play against one.
        self.ca_path = p.get('ca_path') if self.base.lower().startswith('https://') else None

    def request(self, method, path, body=None, accept=(200, 201), headers=None, raw=False):
        """METHOD PATH with BODY as JSON. Returns (status, decoded JSON or
        text when RAW). A status outside ACCEPT raises NettuneError."""
        h = {'Accept': 'application/json'}
        if headers:
            h.update(headers)
        data = None
        if body is not None:
            data = json.dumps(body)
            h['Content-Type'] = 'application/json'
        if self.token:
            h['Authorization'] = 'Bearer ' + self.token
        if self.ca_path and not os.path.isfile(self.ca_path):
            raise NettuneError(-1, 'ca_path %s: no such file (the PEM file of the CA that signed the '
                               'certificate of the agent at %s)' % (self.ca_path, self.base))
        resp, info = fetch_url(self.module, self.base + path, data=data, headers=h, method=method,
                               timeout=self.timeout, ca_path=self.ca_path)
        status = info.get('status', -1)
        # On an HTTP error fetch_url has already read the answer into
        # info['body'] (and hands the spent error back as the response).
        if status >= 400 or resp is None:
            text = info.get('body') or b''
        else:
            text = resp.read()
        if isinstance(text, bytes):
            text = text.decode('utf-8', 'replace')
        if status < 0:
            raise NettuneError(status, 'cannot reach the agent at %s: %s' % (self.base, info.get('msg')))
        doc = None
        if not raw or status >= 300:
            try:
                doc = json.loads(text) if text else None
            except ValueError:
                doc = None
        if status not in accept:
            raise NettuneError(status, problem_message(status, doc, text[:300]), doc)
        return status, (text if raw else doc)

    def fail(self, err, **extra):
        """Fail the task with the agent's problem document."""
        self.module.fail_json(msg=str(err), status=err.status, problem=err.problem, **extra)


def steps_diff(steps, header):
    """An Ansible diff of a plan's or a transaction's steps: one line per
    step with its before- and after-value."""
    before, after = [], []
    for s in steps or []:
        name = '%s %s' % (s.get('kind'), s.get('target'))
        before.append('%s = %s\n' % (name, s.get('before')))
        after.append('%s = %s\n' % (name, s.get('after')))
    return dict(before=''.join(before), after=''.join(after),
                before_header=header + ' (now)', after_header=header + ' (after)')

