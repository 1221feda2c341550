; A negated atom is still checked: 'on' takes two arguments.
(define (domain bw)
  (:requirements :strips :negative-preconditions)
  (:predicates (on ?x ?y) (clear ?x))
  (:action stack
    :parameters (?x ?y)
    :precondition (and (clear ?x)
                       (not (on ?x)))
    :effect (on ?x ?y)))
