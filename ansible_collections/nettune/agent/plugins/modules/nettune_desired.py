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
'''

EXAMPLES = r'''
- name: Keep the host at the stored profile epyc-fix
  nettune.agent.nettune_desired:
    url: "https://{{ inventory_hostname }}:8470"
    profile_name: epyc-fix
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
'''

import json

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


def text(doc):
    return json.dumps(doc, indent=2, sort_keys=True) + '\n' if doc else ''


def main():
    spec = agent_argument_spec()
    spec.update(
        state=dict(type='str', choices=['present', 'absent', 'query'], default='present'),
        profile=dict(type='dict'),
        profile_name=dict(type='str'),
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
            if not same(before, want):
                result['changed'] = True
                if module._diff:
                    result['diff'] = dict(before=text(before), after=text(want))
                if not module.check_mode:
                    _, after = client.request('PUT', '/v1/desired', want, accept=(200, 201, 204))
                    result['desired'] = after if after else read_desired(client)[1]
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
