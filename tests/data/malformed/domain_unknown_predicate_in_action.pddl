; The putdown precondition uses 'holdng' (typo), which is not declared.
(define (domain bw)
  (:predicates (clear ?x) (holding ?x))
  (:action putdown
    :parameters (?x)
    :precondition (and (holdng ?x))
    :effect (and (clear ?x) (not (holding ?x)))))
