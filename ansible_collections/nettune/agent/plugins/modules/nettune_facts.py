#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: Apache-2.0
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: nettune_facts
short_description: The host as a nettune agent sees it, as facts
version_added: 0.1.0
description:
  - Reads the agent's host model (C(GET /v1/topology)), its diagnostics findings
    (C(GET /v1/diagnostics)) and the desired state (C(GET /v1/desired)) and sets them as
    host facts C(nettune_health), C(nettune_topology), C(nettune_findings),
    C(nettune_finding_ids) and C(nettune_desired).
  - C(nettune_desired) is null when none is set, or when the agent does not serve the
    desired state (C(nettune_desired_supported) is then false).
  - Changes nothing; safe in check mode.
author: nettune engineers
extends_documentation_fragment:
  - nettune.agent.agent
options:
  gather:
    description: Which parts to read.
    type: list
    elements: str
    choices: [topology, diagnostics, desired]
    default: [topology, diagnostics, desired]
  rtt_ms:
    description: Round-trip time for the bandwidth-delay product of the C(tcp-buffers-small) finding (the agent's default when unset).
    type: int
'''

EXAMPLES = r'''
- name: Read every agent
  nettune.agent.nettune_facts:
    url: "http://{{ nettune_address }}:8470"
  delegate_to: localhost

- name: Fail where interrupts are served off the NIC's node
  ansible.builtin.assert:
    that: "'irq-remote-node' not in nettune_finding_ids"
'''

RETURN = r'''
ansible_facts:
  description: The facts set.
  returned: always
  type: dict
  contains:
    nettune_health:
      description: C(GET /v1/health) (version, root, network namespace).
      type: dict
    nettune_topology:
      description: The host model (NUMA nodes, CPUs, NICs with rings, MTU, queue length, root qdisc and IRQs, bonds, sysctls, irqbalance).
      type: dict
    nettune_findings:
      description: The findings (C(id), C(severity), C(subject), C(message), C(evidence), C(fix)).
      type: list
      elements: dict
    nettune_finding_ids:
      description: The distinct ids of the findings, sorted.
      type: list
      elements: str
    nettune_desired:
      description: The desired state document, or null.
      type: dict
    nettune_desired_supported:
      description: Whether the agent serves C(/v1/desired).
      type: bool
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.nettune.agent.plugins.module_utils.nettune import (
    NettuneClient, NettuneError, agent_argument_spec)
from ansible_collections.nettune.agent.plugins.module_utils.desired import read_desired


def main():
    spec = agent_argument_spec()
    spec.update(
        gather=dict(type='list', elements='str', choices=['topology', 'diagnostics', 'desired'],
                    default=['topology', 'diagnostics', 'desired']),
        rtt_ms=dict(type='int'),
    )
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    client = NettuneClient(module)
    gather = module.params['gather']
    facts = {}
    try:
        facts['nettune_health'] = client.request('GET', '/v1/health', accept=(200,))[1]
        if 'topology' in gather:
            facts['nettune_topology'] = client.request('GET', '/v1/topology', accept=(200,))[1]
        if 'diagnostics' in gather:
            q = '?rtt_ms=%d' % module.params['rtt_ms'] if module.params['rtt_ms'] else ''
            diag = client.request('GET', '/v1/diagnostics' + q, accept=(200,))[1]
            facts['nettune_findings'] = diag.get('findings') or []
            facts['nettune_finding_ids'] = sorted(set(f.get('id') for f in facts['nettune_findings']))
        if 'desired' in gather:
            supported, doc = read_desired(client)
            facts['nettune_desired_supported'] = supported
            facts['nettune_desired'] = doc
    except NettuneError as e:
        client.fail(e)
    module.exit_json(changed=False, ansible_facts=facts)


if __name__ == '__main__':
    main()
