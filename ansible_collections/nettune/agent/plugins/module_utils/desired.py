# SPDX-License-Identifier: Apache-2.0
# -*- coding: utf-8 -*-
# Reading the agent's desired state (GET /v1/desired). An agent older than
# the desired state answers 404 for the path as for any unknown one, and an
# agent with nothing desired may answer 404 as well; the agent's own API
# contract (GET /v1/openapi.yaml, always served) tells the two apart.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nettune.agent.plugins.module_utils.nettune import NettuneError


def serves_desired(client):
    _, text = client.request('GET', '/v1/openapi.yaml', accept=(200,), raw=True,
                             headers={'Accept': 'application/yaml, text/plain, */*'})
    return '\n  /v1/desired:' in text


def read_desired(client):
    """(supported, document or None)."""
    try:
        status, doc = client.request('GET', '/v1/desired', accept=(200, 204))
    except NettuneError as e:
        if e.status != 404:
            raise
        return serves_desired(client), None
    if status == 204 or not doc:
        return True, None
    return True, doc
