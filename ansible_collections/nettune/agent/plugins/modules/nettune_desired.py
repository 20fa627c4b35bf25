#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: Apache-2.0
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: nettune_desired
short_description: Set, show or clear a nettune agent's desired state
version_added: 0.1.0
description:
  - The desired state is the profile an agent keeps its host at (C(/v1/desired)).
  - C(state=present) sets it (C(PUT /v1/desired)) to an inline I(profile) or a stored
    I(profile_name); nothing is sent when it is already that (C(changed=false)).
  - C(state=absent) clears it (C(DELETE /v1/desired)) when one is set.
  - C(state=query) only reads it.
  - Fails with a clear message when the agent does not serve C(/v1/desired) (an agent
    version from before the desired state).
  - Check mode reports what would change and sends nothing.
  - With I(wait), C(state=present) also waits for the agent to hold the host at the profile
    (C(GET /v1/drift) C(in_sync) after the agent's check of the new desired state), so that
    a host the profile does not take on fails the task rather than drifting quietly.
author: nettune engineers
extends_documentation_fragment:
  - nettune.agent.agent
options:
  state:
    description: What to do.
    type: str
    choices: [present, absent, query]
    default: present
  profile:
    description: The profile to keep the host at. Exactly one of I(profile) and I(profile_name) with C(state=present).
    type: dict
  profile_name:
    description: The name of a profile stored on the agent.
    type: str
  wait:
    description:
      - With C(state=present), seconds to wait for the agent's drift check to find the host
        as the profile says (C(GET /v1/drift) status C(in_sync)); C(0) does not wait.
      - When the desired state was changed, only a check made after the change counts. The
        task fails when the check finds the profile C(invalid) on the host now, when the
        agent only reports drift (C(--drift-policy report)), or when the host is not in sync
        within I(wait) seconds; the message has the check's status, errors and the targets
        that differ.
      - Not used in check mode.
    type: int
    default: 0
'''

EXAMPLES = r'''
- name: Keep the host at the stored profile epyc-fix
  nettune.agent.nettune_desired:
    url: "https://{{ inventory_hostname }}:8470"
    profile_name: epyc-fix
  delegate_to: localhost

- name: Hold the host at a profile, and fail unless the agent has it there within 30 s
  nettune.agent.nettune_desired:
    profile: "{{ winner_profile }}"
    wait: 30
  delegate_to: localhost

- name: Show it
  nettune.agent.nettune_desired:
    state: query
  register: desired

- name: Clear it
  nettune.agent.nettune_desired:
    state: absent
'''

RETURN = r'''
desired:
  description: The desired state after the task (as the agent reports it), or null when none is set.
  returned: always
  type: dict
before:
  description: The desired state before the task, or null.
  returned: always
  type: dict
drift:
  description: The agent's drift report (C(GET /v1/drift)) that ended the wait.
  returned: with I(wait) above 0 and C(state=present), not in check mode
  type: dict
'''

import json
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.nettune.agent.plugins.module_utils.nettune import (
    NettuneClient, NettuneError, agent_argument_spec)
from ansible_collections.nettune.agent.plugins.module_utils.desired import read_desired


def same(doc, want):
    """Whether the agent's desired document DOC already says WANT.

    The agent keeps a copy of the profile (a stored profile named later is
    copied when set) and names it by the profile's own "name": an inline
    profile is the same when the copy is equal; a stored one when the name
    and the copy's source agree."""
    if not isinstance(doc, dict):
        return False
    if 'profile_name' in want:
        return doc.get('profile_name') == want['profile_name'] and doc.get('source') == 'api'
    return doc.get('profile') == want['profile']


def drift_detail(drift):
    """The check's status, message, errors and differing targets, in one line."""
    parts = ['status %s' % drift.get('status')]
    if drift.get('message'):
        parts.append(str(drift['message']))
    errors = drift.get('errors') or []
    if errors:
        parts.append('errors: ' + '; '.join('%s: %s' % (e.get('path', '?'), e.get('message', ''))
                                            for e in errors if isinstance(e, dict)))
    targets = drift.get('targets') or []
    if targets:
        parts.append('targets: ' + '; '.join(
            '%s %s (%s: desired %s, now %s)' % (t.get('kind', '?'), t.get('target', '?'), t.get('state', '?'),
                                               t.get('desired'), t.get('current'))
            for t in targets[:10] if isinstance(t, dict)))
    return ', '.join(parts)


def wait_in_sync(module, client, seconds, checks_before, set_at):
    """Poll GET /v1/drift until a check after CHECKS_BEFORE, and not
    before SET_AT (the desired state's 'set' time), finds the host in sync;
    None for both when nothing was changed: any check counts. Fails the task
    when the check says the profile is invalid here, when the agent only
    reports drift, or when SECONDS pass."""
    deadline = time.time() + seconds
    while True:
        _, drift = client.request('GET', '/v1/drift', accept=(200,))
        drift = drift or {}
        fresh = checks_before is None or (drift.get('checks') or 0) > checks_before
        # Both times are the agent's, as ISO 8601 UTC with milliseconds,
        # which order as text.
        if fresh and set_at and isinstance(drift.get('last_check'), str):
            fresh = drift['last_check'] >= set_at
        if fresh and drift.get('status') == 'in_sync':
            return drift
        if fresh and drift.get('status') == 'invalid':
            module.fail_json(msg='the agent at %s cannot hold the host at the desired profile: %s'
                                 % (client.base, drift_detail(drift)), drift=drift)
        if fresh and drift.get('status') == 'drifted' and drift.get('policy') == 'report':
            module.fail_json(msg='the agent at %s only reports drift (--drift-policy report), so it does not '
                                 'apply the desired state: %s' % (client.base, drift_detail(drift)), drift=drift)
        if time.time() >= deadline:
            module.fail_json(msg='the agent at %s did not hold the host at the desired profile within %d s: %s%s'
                                 % (client.base, seconds, drift_detail(drift),
                                    '' if fresh else ' (no check since the desired state was set)'), drift=drift)
        time.sleep(0.25)


def text(doc):
    return json.dumps(doc, indent=2, sort_keys=True) + '\n' if doc else ''


def main():
    spec = agent_argument_spec()
    spec.update(
        state=dict(type='str', choices=['present', 'absent', 'query'], default='present'),
        profile=dict(type='dict'),
        profile_name=dict(type='str'),
        wait=dict(type='int', default=0),
    )
    module = AnsibleModule(argument_spec=spec, mutually_exclusive=[('profile', 'profile_name')],
                           supports_check_mode=True)
    p = module.params
    client = NettuneClient(module)
    try:
        supported, before = read_desired(client)
        if not supported:
            module.fail_json(msg='the agent at %s does not serve /v1/desired (its version predates the '
                                 'desired state)' % client.base, unsupported=True)
        result = dict(changed=False, before=before, desired=before)
        if p['state'] == 'present':
            if (p['profile'] is None) == (p['profile_name'] is None):
                module.fail_json(msg='state=present wants exactly one of profile and profile_name')
            want = {'profile': p['profile']} if p['profile'] is not None else {'profile_name': p['profile_name']}
            if p['wait'] < 0:
                module.fail_json(msg='wait wants 0 or more seconds, not %d' % p['wait'])
            checks_before = set_at = None
            if not same(before, want):
                result['changed'] = True
                if module._diff:
                    result['diff'] = dict(before=text(before), after=text(want))
                if not module.check_mode:
                    if p['wait']:
                        _, drift = client.request('GET', '/v1/drift', accept=(200,))
                        checks_before = (drift or {}).get('checks') or 0
                    _, after = client.request('PUT', '/v1/desired', want, accept=(200, 201, 204))
                    result['desired'] = after if after else read_desired(client)[1]
                    set_at = (result['desired'] or {}).get('set')
            if p['wait'] and not module.check_mode:
                result['drift'] = wait_in_sync(module, client, p['wait'], checks_before, set_at)
        elif p['state'] == 'absent' and before:
            result['changed'] = True
            if module._diff:
                result['diff'] = dict(before=text(before), after='')
            if not module.check_mode:
                client.request('DELETE', '/v1/desired', accept=(200, 204, 404))
                result['desired'] = None
    except NettuneError as e:
        client.fail(e)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
