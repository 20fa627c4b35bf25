#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: Apache-2.0
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: nettune_profile
short_description: Apply a tuning profile through a nettune agent, confirm it or roll it back
version_added: 0.1.0
description:
  - C(state=present) plans the profile on the agent (C(POST /v1/plan)). When the plan has no
    steps the host is already tuned and nothing is sent (C(changed=false)); otherwise that
    very plan is applied, by its id, as one journalled transaction (C(POST /v1/transactions)
    with C(plan_id)). The steps applied are the ones the task showed (C(--diff)), and if a
    target moved in between nothing is applied and the task fails with the agent's
    C(plan-moved) answer naming the targets. An agent older than plan ids is sent the profile
    instead.
  - The transaction's answer is asked for without its steps (C(?steps=failed)) and carries
    C(nsteps), C(step_counts) and any failed step; I(steps) are the plan's.
  - In check mode only the plan is asked for; C(changed) says whether it has steps, and
    nothing on the host is touched.
  - With C(--diff) every step shows its before- and after-value.
  - With I(confirm_timeout) the agent reverts the transaction by itself unless it is
    confirmed in time (C(state=confirmed)); this is how a rollout survives a change that
    cuts the host off.
  - C(state=confirmed) confirms a C(pending_confirm) transaction; C(state=absent) rolls back
    an C(applied) one as a new transaction, and reverts a C(pending_confirm) one at once
    (I(status) C(reverted), no new transaction), without waiting for its window. Both are
    no-ops (C(changed=false)) when already done.
  - When the plan has no steps because a transaction of this same profile is still waiting for
    confirmation (a rerun inside its window), that transaction is returned (C(changed=false),
    I(status) C(pending_confirm)) so that it can be confirmed; a waiting transaction of another
    profile gives a warning, as its values go back when its window closes.
  - A transaction that ends C(rolled_back) or C(rollback_failed) (a step the kernel refused)
    fails the task with the agent's error and the failed step.
  - The plan's warnings (irqbalance rewriting the IRQ affinity the profile sets, a ring
    change that may reset the NIC, CPUs off the NIC's node, ...) are shown as the task's
    warnings; with I(fail_on_warnings) they fail the task before anything is applied.
author: nettune engineers
extends_documentation_fragment:
  - nettune.agent.agent
options:
  state:
    description: What to do.
    type: str
    choices: [present, confirmed, absent]
    default: present
  profile:
    description:
      - The profile itself (the JSON document of the agent's docs/profiles.md, as a dict).
      - Exactly one of I(profile) and I(profile_name) with C(state=present).
    type: dict
  profile_name:
    description: The name of a profile stored on the agent (C(PUT /v1/profiles/NAME)).
    type: str
  confirm_timeout:
    description:
      - Seconds the agent waits for a confirmation before it reverts the transaction by itself.
      - Leave unset for a transaction that stands at once.
    type: int
  transaction_id:
    description: The transaction to confirm (C(state=confirmed)) or roll back (C(state=absent)).
    type: int
  force:
    description: With C(state=absent), roll back even over later transactions that changed the same targets.
    type: bool
    default: false
  idempotency_key:
    description:
      - Sent as C(Idempotency-Key) with the apply; a retry with the same key gets the
        original transaction back instead of a second one. With it the profile is sent
        rather than the plan's id (a retry must be the same request, and each run's plan has
        another id), so the agent plans it again for the apply.
    type: str
  fail_on_warnings:
    description:
      - With C(state=present), fail the task when the plan has warnings, before anything is
        applied (also in check mode). The warnings are in the message and in I(warnings_agent).
      - Without it the warnings are shown as the task's warnings and the profile is applied.
    type: bool
    default: false
'''

EXAMPLES = r'''
- name: Plan and apply a profile, keeping it only if confirmed within 120 s
  nettune.agent.nettune_profile:
    url: "https://{{ inventory_hostname }}:8470"
    token: "{{ vault_nettune_token }}"
    profile: "{{ lookup('file', 'profiles/epyc-fix.json') | from_json }}"
    confirm_timeout: 120
  delegate_to: localhost
  register: tuned

- name: Confirm it
  nettune.agent.nettune_profile:
    url: "https://{{ inventory_hostname }}:8470"
    state: confirmed
    transaction_id: "{{ tuned.transaction.id }}"
  delegate_to: localhost
  when: tuned.transaction is not none

- name: Apply a stored profile, refusing a plan with warnings (irqbalance running, ...)
  nettune.agent.nettune_profile:
    profile_name: epyc-fix
    fail_on_warnings: true

- name: Roll a transaction back
  nettune.agent.nettune_profile:
    state: absent
    transaction_id: 42

# enos2 (node 1) has 17 IRQs, the async one first: CPUs of both nodes put
# queues 0-7 on node 0 and 8-15 on node 1. Context 1 takes node 0's queues,
# context 2 node 1's; each application's ports go to its context.
- name: Give two applications each their node's RX queues (RSS contexts)
  nettune.agent.nettune_profile:
    profile:
      name: two-apps
      irq_affinity:
        - { interface: enos2, cpus: "0-8,32-39" }
      rss:
        - { interface: enos2, context: 1, queues: placed, node: 0 }
        - { interface: enos2, context: 2, queues: placed, node: 1 }
        - { interface: enos2, queues: placed }
      flows:
        - { interface: enos2, flow_type: tcp4, dst_ports: "5201-5204", context: 1 }
        - { interface: enos2, flow_type: tcp4, dst_ports: "6201-6204", context: 2 }
'''

RETURN = r'''
plan:
  description: The agent's plan (C(steps), C(warnings), C(reserved)) for C(state=present).
  returned: state is present
  type: dict
steps:
  description: The steps planned (check mode, or nothing to do) or made, each with C(kind), C(target), C(before), C(after).
  returned: state is present
  type: list
  elements: dict
transaction:
  description: >
    The transaction document (C(id), C(status), C(confirm_deadline), C(nsteps), C(step_counts) and
    the failed C(steps), if any; C(GET /v1/transactions/ID) has every step); null when nothing was applied.
  returned: always
  type: dict
transaction_id:
  description: The id of the transaction made or acted on; null when none.
  returned: always
  type: int
status:
  description: The transaction's status (C(applied), C(pending_confirm), C(reverted), ...); null when none.
  returned: always
  type: str
warnings_agent:
  description:
    - The plan's warnings (irqbalance will undo affinity, a ring change may reset the NIC, ...).
    - Each is also one of the task's warnings.
  returned: state is present
  type: list
  elements: str
problem:
  description: The agent's problem document when it answered with an error.
  returned: failure
  type: dict
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.nettune.agent.plugins.module_utils.nettune import (
    NettuneClient, NettuneError, agent_argument_spec, steps_diff)

# Statuses of a transaction whose changes are no longer on the host.
UNDONE = ('rolled_back', 'reverted', 'recovered')


def body_of(p):
    if p['profile'] is not None:
        return p['profile']
    return {'profile_name': p['profile_name']}


def present(module, client):
    p = module.params
    if (p['profile'] is None) == (p['profile_name'] is None):
        module.fail_json(msg='state=present wants exactly one of profile and profile_name')
    _, plan = client.request('POST', '/v1/plan', body_of(p), accept=(200,))
    steps = plan.get('steps') or []
    result = dict(changed=bool(steps), plan=plan, steps=steps, transaction=None, transaction_id=None,
                  status=None, warnings_agent=plan.get('warnings') or [])
    if module._diff:
        result['diff'] = steps_diff(steps, p['profile_name'] or (p['profile'] or {}).get('name') or 'profile')
    for w in result['warnings_agent']:
        module.warn('nettune plan: %s' % w)
    if p['fail_on_warnings'] and result['warnings_agent']:
        result['changed'] = False
        module.fail_json(msg='the plan has %d warning(s) and fail_on_warnings is set; nothing was applied: %s' % (
            len(result['warnings_agent']), '; '.join(result['warnings_agent'])), **result)
    if not steps:
        adopt_pending(module, client, result)
    if not steps or module.check_mode:
        return result
    # The plan just shown, by its id: what is applied is what was
    # planned (and diffed). With an Idempotency-Key the profile is sent as
    # before, so that a retry is the same request and replays; a new plan
    # id each run would be a different body under the same key.
    lean = plan.get('id') is not None
    if lean and not p['idempotency_key']:
        req = {'plan_id': plan['id']}
    elif p['profile'] is not None:
        req = {'profile': p['profile']}
    else:
        req = {'profile_name': p['profile_name']}
    if p['confirm_timeout']:
        req['confirm_timeout_s'] = p['confirm_timeout']
    headers = {'Idempotency-Key': p['idempotency_key']} if p['idempotency_key'] else None
    _, txn = client.request('POST', '/v1/transactions?steps=failed' if lean else '/v1/transactions', req,
                            headers=headers)
    result.update(transaction=txn, transaction_id=txn.get('id'), status=txn.get('status'),
                  steps=steps if lean else txn.get('steps') or steps)
    if txn.get('status') not in ('applied', 'pending_confirm'):
        module.fail_json(msg='transaction %s ended %s: %s (failed step %s)' % (
            txn.get('id'), txn.get('status'), txn.get('error'), txn.get('failed_step')), **result)
    return result


def adopt_pending(module, client, result):
    """With nothing to change, the values may still be held only by a
    transaction waiting for confirmation (a rerun inside its window): they
    go back when the window closes. When that transaction applied this very
    profile, it is reported as this task's, so that it can be confirmed;
    otherwise a warning says so."""
    p = module.params
    _, page = client.request('GET', '/v1/transactions?status=pending_confirm&limit=1', accept=(200,))
    rows = page.get('transactions') or []
    if not rows:
        return
    _, txn = client.request('GET', '/v1/transactions/%d' % rows[0]['id'], accept=(200,))
    ours = (txn.get('profile_name') == p['profile_name'] if p['profile_name'] is not None
            else txn.get('profile') == p['profile'])
    if ours:
        result.update(transaction=txn, transaction_id=txn.get('id'), status=txn.get('status'))
    else:
        module.warn('transaction %s (another profile) waits for confirmation until %s; the values this '
                    'profile wants go back then unless it is confirmed' % (txn.get('id'), txn.get('confirm_deadline')))


def get_txn(client, txn_id):
    _, txn = client.request('GET', '/v1/transactions/%d' % txn_id, accept=(200,))
    return txn


def rollback_of(client, txn_id):
    """The applied rollback of TXN_ID in the history, or None."""
    offset = 0
    while True:
        _, page = client.request('GET', '/v1/transactions?status=applied&limit=500&offset=%d' % offset,
                                 accept=(200,))
        rows = page.get('transactions') or []
        for t in rows:
            if t.get('rollback_of') == txn_id:
                return t
        offset += len(rows)
        if not rows or offset >= page.get('total', 0):
            return None


def confirmed(module, client):
    txn_id = module.params['transaction_id']
    txn = get_txn(client, txn_id)
    st = txn.get('status')
    result = dict(changed=False, transaction=txn, transaction_id=txn_id, status=st)
    if st == 'applied':
        return result
    if st != 'pending_confirm':
        module.fail_json(msg='transaction %d is %s, it can no longer be confirmed' % (txn_id, st), **result)
    result['changed'] = True
    if module.check_mode:
        return result
    _, txn = client.request('POST', '/v1/transactions/%d/confirm' % txn_id, {}, accept=(200,))
    result.update(transaction=txn, status=txn.get('status'))
    return result


def absent(module, client):
    p = module.params
    txn_id = p['transaction_id']
    txn = get_txn(client, txn_id)
    st = txn.get('status')
    result = dict(changed=False, transaction=txn, transaction_id=txn_id, status=st)
    if st in UNDONE:
        return result
    done = rollback_of(client, txn_id)
    if done is not None:
        result.update(transaction=done, transaction_id=done.get('id'), status=done.get('status'))
        return result
    result['changed'] = True
    if module._diff:
        undo = [dict(kind=s.get('kind'), target=s.get('target'), before=s.get('after'), after=s.get('before'))
                for s in reversed(txn.get('steps') or []) if s.get('result') == 'applied']
        result['diff'] = steps_diff(undo, 'rollback of %d' % txn_id)
    if module.check_mode:
        return result
    _, rb = client.request('POST', '/v1/transactions/%d/rollback' % txn_id, {'force': True} if p['force'] else {},
                           headers={'Idempotency-Key': 'ansible-rollback-%d' % txn_id})
    result.update(transaction=rb, transaction_id=rb.get('id'), status=rb.get('status'))
    if rb.get('id') == txn_id and rb.get('status') == 'reverted':
        # It was waiting for confirmation: the agent reverted it at once.
        return result
    if rb.get('status') != 'applied':
        module.fail_json(msg='rollback of %d ended %s: %s' % (txn_id, rb.get('status'), rb.get('error')), **result)
    return result


def main():
    spec = agent_argument_spec()
    spec.update(
        state=dict(type='str', choices=['present', 'confirmed', 'absent'], default='present'),
        profile=dict(type='dict'),
        profile_name=dict(type='str'),
        confirm_timeout=dict(type='int'),
        transaction_id=dict(type='int'),
        force=dict(type='bool', default=False),
        idempotency_key=dict(type='str', no_log=False),
        fail_on_warnings=dict(type='bool', default=False),
    )
    module = AnsibleModule(
        argument_spec=spec,
        mutually_exclusive=[('profile', 'profile_name')],
        required_if=[('state', 'confirmed', ('transaction_id',)), ('state', 'absent', ('transaction_id',))],
        supports_check_mode=True,
    )
    ct = module.params['confirm_timeout']
    if ct is not None and not 1 <= ct <= 86400:
        module.fail_json(msg='confirm_timeout wants seconds from 1 to 86400, not %d' % ct)
    client = NettuneClient(module)
    try:
        result = {'present': present, 'confirmed': confirmed, 'absent': absent}[module.params['state']](module, client)
    except NettuneError as e:
        client.fail(e)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
