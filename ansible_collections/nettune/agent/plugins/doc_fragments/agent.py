# SPDX-License-Identifier: Apache-2.0
# -*- coding: utf-8 -*-
# The connection options every nettune module shares.
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r'''
options:
  url:
    description:
      - Base URL of the nettune agent, such as C(https://host1:8470).
      - Defaults to the C(NETTUNE_URL) environment variable, then C(http://127.0.0.1:8470).
    type: str
  token:
    description:
      - Bearer token, sent in the C(Authorization) header as C(Bearer TOKEN) (the secret of a line of the agent's tokens file).
      - Defaults to the C(NETTUNE_TOKEN) environment variable. Never logged.
      - Changes need a token of scope C(apply); reads need C(read).
    type: str
  validate_certs:
    description:
      - Verify the agent's TLS certificate. Only turn this off for a lab.
    type: bool
    default: true
  ca_path:
    description:
      - PEM file of the CA that signed the agent's certificate, for an C(https://) I(url);
        not used for an C(http://) one. A file that is not there fails the task, saying so.
    type: path
  client_cert:
    description:
      - PEM client certificate, for an agent started with C(--tls-client-ca).
    type: path
  client_key:
    description:
      - PEM private key of I(client_cert).
    type: path
  timeout:
    description:
      - Seconds to wait for each answer of the agent.
    type: int
    default: 60
notes:
  - "The module talks to the agent over HTTP from wherever it runs: delegated to the controller
    (C(delegate_to=localhost)), a controller drives agents it reaches over the network."
  - "A 4xx answer fails the task with the agent's problem document in I(problem); its
    C(title), C(detail) and, for an invalid profile, every C(errors[].path) (a JSON path such
    as C($.rings[0].rx)) are in the message."
'''
